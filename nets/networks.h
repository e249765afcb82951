#pragma once
// An algorithm's networks (nets/network_spec.h: Deep CFR declares an advantage MLP per player and
// one strategy MLP, deep-cfr.md §1, §3): one MLP per declared network, its AdamW optimiser, and
// inference snapshots that the schedulers' batchers query.
//
// This header is LibTorch-free (the implementation hides behind a pointer), so that only nets/
// pays torch's compile cost.
//
// Weight publication: training updates the training copies; publish() copies them into the
// inference snapshots between traversal phases, so no query ever sees half-updated weights
// and every query of a phase sees the same weights (samples stay reproducible).
// publish() and set_published_weights() must not run while any evaluator of the set is
// evaluating: they copy into the snapshots the evaluators read (cfr-run publishes between phases).
// Threads: evaluator(i) is used by one thread at a time (the scheduler's device thread);
// different networks may train concurrently on different threads (each has its own batch
// buffers); training never runs concurrently with publish().
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/core/rng.h"
#include "engine/memory/reservoir.h"
#include "nets/network_spec.h"
#include "sched/evaluator.h"

namespace cfr {

struct NetworkConfig {
  int hidden_size = 512;
  int num_layers = 3;
  std::string activation = "relu";  // relu | tanh | gelu
  std::string device = "cpu";       // cpu | cuda
  int device_index = 0;             // cuda: which GPU (taken modulo the number of GPUs)
  /// 0: forward each batch as it comes (fast). N > 0: forward in chunks of exactly N rows (the
  /// last one zero-padded), so that a row's output does not depend on the batch it came in:
  /// BLAS kernels sum in an order that depends on the batch's size and the row's position
  /// (docs/deep-cfr.md "Batch invariance"). Samples are then identical across schedulers,
  /// batch limits and processes; N = 8 is invariant with this machine's OpenBLAS.
  int invariant_chunk = 0;
  /// fp32 | bf16 | auto. bf16: the evaluators' forwards and the training steps' forwards and
  /// backwards run in bfloat16 (the matrix products on oneDNN's AVX-512 BF16 / AMX kernels on
  /// CPU); the training weights, their gradients, the optimiser state, weight averages,
  /// published_weights() and checkpoints stay float32, and evaluators still hand back float32
  /// outputs (each a bfloat16 value). auto: bf16 where resolve_precision() finds it fast, else
  /// fp32. Within a precision runs stay reproducible (invariant_chunk included).
  std::string precision = "fp32";
};

/// What network.precision = `requested` resolves to on `device` ("cpu" or "cuda"): "fp32" or
/// "bf16", and why (one line for the run's log). auto picks bf16 on a CPU whose flags
/// (/proc/cpuinfo) include avx512_bf16 or amx_bf16 when LibTorch has oneDNN, on CUDA when the
/// device's compute capability is 8.0 or above; otherwise fp32. Throws InputError for another value.
struct PrecisionChoice {
  std::string name;  // fp32 | bf16
  std::string why;
};
PrecisionChoice resolve_precision(const std::string& requested, const std::string& device, int device_index = 0);

/// Data-parallel training (distributed.learners > 1, docs/distributed.md "Data-parallel
/// learners"): what the training loop asks of the learners' transport. nets/ knows no MPI: the
/// implementation is apps/run/distributed.cc's. Learner 0 owns the memory and draws every batch
/// exactly as one process does; of N learners, learner k trains on rows [b·k/N, b·(k+1)/N) of
/// each batch of b rows. After every backward, before clipping and the step, the loop hands over
/// the flat gradient (set order of the parameters) times its shard's weight (the loss's
/// denominator: summed sample weights, or rows), then that weight and the weighted loss; sum()
/// makes them sums over the learners, and every learner steps on Σ weight·gradient / Σ weight —
/// the gradient of the whole batch's loss, as one learner computes it, up to floating-point
/// rounding. Every learner applies the same step to the same weights (the caller gives them the
/// same starting state: NetworkSet::training_state), so their weights stay identical.
/// Calls come from the training thread, in the same order on every learner.
class DataParallel {
 public:
  virtual ~DataParallel() = default;
  virtual int learners() const noexcept = 0;  // N ≥ 2
  virtual int index() const noexcept = 0;     // this learner, 0..N-1; 0 draws the batches
  /// Learner 0: sends every other learner its rows of the batch of `rows` rows just drawn into
  /// the row-major buffers (inputs rows × input_width, targets and legal rows × target_width,
  /// weights rows), or with rows = −1 the end of this network's training; returns its own row
  /// count (the first rows of the buffers). Learner k > 0: receives its rows into the front of
  /// the buffers (which hold at least TrainConfig::batch_size rows) and returns their count, or
  /// −1 when learner 0 has ended this network's training.
  virtual int exchange_batch(int rows, int input_width, int target_width, std::span<float> inputs, std::span<float> targets,
                             std::span<float> legal, std::span<float> weights) = 0;
  /// Replaces `values` by their elementwise sums over every learner (the same bits on each).
  virtual void sum(std::span<float> values) = 0;
};

struct TrainConfig {
  int updates = 512;  // optimiser steps per network per iteration
  int batch_size = 1024;
  double learning_rate = 1e-4;
  double weight_decay = 1e-4;
  double grad_clip = 1.0;        // global norm (0 = none)
  bool linear_weighting = true;  // weight samples by t / T (linear CFR); false = uniform
  /// 0: publish the trained weights. β in (0, 1): publish an exponential moving average of the
  /// weights (Polyak averaging), updated after every step as ema = β·ema + (1 − β)·w, which
  /// removes most of the step-to-step noise of the published network.
  double ema_decay = 0;
  /// Masked-MSE networks regress on target / target_scale (regret matching is scale-free, so an
  /// advantage network may learn regrets in smaller units; 1 = the targets as they are).
  double target_scale = 1.0;
  /// The terms of NetLoss::kClippedPolicyGradient (MMD's policy, Sokota et al. 2022): per sample
  /// −min(ρ·Â, clip(ρ, 1 ± clip)·Â) + magnet_weight·KL(π‖magnet) + bc_weight·CE(bot move, π)
  /// − entropy_weight·H(π), with ρ = π(a)/π_behaviour(a).
  struct PolicyGradientTerms {
    double clip = 0.2;
    double magnet_weight = 0.05;
    double bc_weight = 0;
    double entropy_weight = 0;
    /// Â is standardised over each batch ((Â − mean) / std, as PPO implementations do), so that
    /// the KL and entropy weights are relative to advantages of unit scale whatever the rewards.
    bool normalize_advantage = false;
  } policy_gradient{};
  /// When set (SIGINT/SIGTERM), training returns after the current step with TrainStats::stopped.
  const std::atomic<bool>* stop = nullptr;
  /// Set: this learner trains its shard of every batch and the gradients are summed over the
  /// learners before each step (DataParallel). Null: one learner, the whole batch.
  DataParallel* data_parallel = nullptr;
};

struct TrainStats {
  bool stopped = false;  // TrainConfig::stop was seen: fewer than `updates` steps ran
  int steps = 0;
  int skipped_nonfinite = 0;
  double mean_loss = 0;
  double last_loss = 0;
  double seconds = 0;
  // Where the time went (the "pure compute" of the updates vs. the rest).
  double sample_seconds = 0;            // drawing batches from the memory into host buffers
  double forward_backward_seconds = 0;  // copies to the device, forward, loss, backward
  double step_seconds = 0;              // gradient clipping and the AdamW step
  double exchange_seconds = 0;          // data-parallel: shards sent or received, gradients summed (waits included)
  double mean_grad_norm = 0;            // global gradient norm before clipping, mean over steps
  int clipped_steps = 0;                // steps whose gradient norm exceeded grad_clip
  /// kClippedPolicyGradient: the means over steps of the clipped surrogate, KL(π‖magnet), the
  /// bot-cloning cross-entropy, the entropy of π and the share of samples whose ratio was clipped.
  struct PolicyGradientParts {
    double surrogate = 0, magnet_kl = 0, bot_cross_entropy = 0, entropy = 0, clipped_share = 0;
  } policy_gradient{};
};

class NetworkSet {
 public:
  /// One MLP per entry of `specs` (1 to 64), network n initialised from derive_seed(seed, "nets",
  /// n). Throws InputError for an unknown activation, or when cuda is asked for without a device.
  NetworkSet(NetworkSpecs specs, const NetworkConfig& cfg, std::uint64_t seed);
  ~NetworkSet();
  NetworkSet(const NetworkSet&) = delete;
  NetworkSet& operator=(const NetworkSet&) = delete;

  int size() const noexcept { return static_cast<int>(specs_.size()); }
  const NetworkSpecs& specs() const noexcept { return specs_; }
  const NetworkSpec& spec(int net) const;

  /// The evaluator of network `net`, reading the published snapshot.
  Evaluator& evaluator(int net);
  /// Every network's evaluator of replica `replica`, in set order: what a scheduler is given.
  std::vector<Evaluator*> evaluators(int replica = 0);
  /// Replicas of the published snapshots (own weights and buffers) for traversals that run on
  /// several threads at once; publish() updates them too. Replica 0 is evaluator(net).
  void set_replicas(int count);
  int replicas() const noexcept;
  Evaluator& evaluator(int net, int replica);

  /// `updates` steps of network `net` with its declared loss on batches from `memory` (§3): a
  /// reservoir memory, or its MergedSamples (then the weight column already holds each row's
  /// weight: train with linear_weighting on).
  TrainStats train(int net, BatchSource& memory, int iteration, const TrainConfig& cfg, Rng& rng);
  /// Learner k > 0 of data-parallel training (cfg.data_parallel set, its index ≥ 1): the steps
  /// of network `net` on the shards learner 0 sends, until it ends them. No memory: the batches
  /// are learner 0's. Its TrainStats hold the whole batch's losses (the sums), as learner 0's do.
  TrainStats train_shard(int net, int iteration, const TrainConfig& cfg);
  /// Network `net`'s training weights and optimiser state as bytes (a LibTorch archive; no
  /// weight average): what data-parallel learners start a network's training from, so that they
  /// step from the same state as learner 0 whatever happened before (a resume, a
  /// re-initialisation, published weights a traversal rank received).
  std::string training_state(int net) const;
  /// Sets network `net`'s training weights and optimiser state from training_state()'s bytes
  /// (not published). Throws InputError when they do not decode to this network's shape.
  void set_training_state(int net, const std::string& bytes);
  /// Sets network `net`'s training weights (a copy of published_weights(k) of a network of the same shape:
  /// MMD's magnet and snapshot opponents), drops its weight average if it has one, and publishes
  /// it. Throws InputError on a size mismatch.
  void set_weights(int net, std::span<const float> weights);
  /// Re-initialises network `net` and its optimiser (Deep CFR's advantage nets, the paper's
  /// recipe), from a seed derived from (seed, net, iteration) so that runs and resumed runs agree.
  void reinitialize(int net, int iteration);
  /// Writes the training nets and optimiser states to `path` (a LibTorch archive; callers write
  /// a temporary path and rename it). InputError "<path>: cannot write: <strerror>" when the file
  /// cannot be written whole (a full disk: "No space left on device").
  void save(const std::string& path) const;
  /// Loads what save() wrote and publishes it. Throws InputError naming the file and what does
  /// not match (e.g. a network of another shape).
  void load(const std::string& path);
  /// Copies the training weights into the inference snapshots.
  void publish();
  /// Publishes one network only.
  void publish(int net);

  /// Output values of network `net` that were NaN or infinite since the last call (each was
  /// replaced by 0 before the traversal saw it); resets the count.
  std::int64_t take_nonfinite_outputs(int net);
  /// Whether every training weight of network `net` is finite.
  bool weights_finite(int net) const;
  /// Fault injection (tests of the non-finite policy): sets every weight of network `net` to NaN
  /// and publishes.
  void inject_nonfinite_weights(int net);

  /// The published (inference) weights of every network, flattened in set order: what a
  /// distributed run broadcasts to its traversal processes (total_parameters() floats).
  std::vector<float> published_weights() const;
  /// The published weights of network `net` alone (what its evaluator plays: the weight average
  /// when training averages, else the trained weights), flattened in parameter order (what set_weights takes).
  std::vector<float> published_weights(int net) const;
  /// Sets the training and published weights of every network from published_weights()'s layout
  /// (a traversal process of a distributed run): the evaluators then play exactly these weights,
  /// and any weight average the set kept from its own training is dropped (as set_weights does),
  /// since it would be published instead. Throws InputError on a size mismatch.
  void set_published_weights(std::span<const float> weights);

  /// The precision the set computes in (network.precision resolved: "fp32" or "bf16").
  const std::string& precision() const noexcept;

  std::int64_t parameters(int net) const;
  std::int64_t total_parameters() const;

  struct Impl;  // LibTorch state (nets/networks.cc)

 private:
  NetworkSpecs specs_;
  std::unique_ptr<Impl> impl_;
};

/// The weights (published_weights(net)'s layout: the first layer's hidden × inputs matrix first,
/// row-major) of an MLP of `hidden` units per layer and `old_inputs` inputs, rewired to
/// column_of.size() inputs: new input j reads old input column_of[j], or nothing (zero weights)
/// when column_of[j] is −1. Every other parameter is copied. With zero weights on the new inputs
/// the network computes exactly what it did. InputError when `weights` is too short or an index is
/// out of range.
std::vector<float> rewire_inputs(std::span<const float> weights, int hidden, int old_inputs, std::span<const int> column_of);

/// The shape of an MLP's hidden layers: `layers` layers of `hidden` units each.
struct MlpShape {
  int inputs = 0, outputs = 0, hidden = 0, layers = 0;
};

/// The weights (published_weights(net)'s layout) of an MLP of shape `from` grown to `to_hidden`
/// units per layer and `to_layers` layers (each at least `from`'s), computing exactly what it
/// did (net2net growth, Chen et al. 2016): a new unit reads the previous layer through random
/// weights (uniform in ±1/√fan-in, from `seed`) and is read with zero weights by every old unit and
/// by the output layer, so it only starts to matter once training gives its outgoing weights a
/// value; old units read new ones with zero weights. Added layers (relu only: relu(x) = x for the
/// non-negative activations they receive) come after the last hidden layer as identity matrices
/// with zero biases. InputError for a smaller shape, a `weights` size that is not `from`'s, or
/// added layers with another activation than relu.
std::vector<float> grow_mlp(std::span<const float> weights, const MlpShape& from, int to_hidden, int to_layers,
                            const std::string& activation, std::uint64_t seed);

/// Sets torch to `threads` intra-op threads and OpenBLAS, when it is the loaded BLAS, to 1 thread
/// (through openblas_set_num_threads: OPENBLAS_NUM_THREADS is only read when the library loads).
void configure_torch_threads(int threads);

}  // namespace cfr
