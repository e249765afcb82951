#pragma once
// The evaluator interface: what a batcher calls to turn a batch of encoded information states
// into network outputs. It knows nothing of LibTorch (nets/ implements it with an MLP).
//
// evaluate() is synchronous and is called by one thread at a time (the thread that owns the
// device: the scheduler's loop thread, or the pooled scheduler's inference thread). Row i of
// `inputs` (input_width floats) with legal mask `legal[i]` yields row i of `outputs`
// (output_width floats, caller-owned). Results must depend only on the row, never on the batch
// it came in, so that samples do not depend on scheduling.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/game.h"

namespace cfr {

/// The largest batch an evaluator without a limit of its own accepts (and the largest a scheduler
/// or a benchmark may ask for).
inline constexpr int kMaxEvaluatorBatch = 1 << 20;
/// Networks an algorithm may declare (a FlushPolicy's mask has one bit per network).
inline constexpr int kMaxNetworks = 64;

struct EvaluatorInfo {
  int input_width = 0;
  int output_width = 0;
  int preferred_batch = 1;             // the batch size this evaluator runs best at
  int max_batch = kMaxEvaluatorBatch;  // the largest batch it accepts
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual EvaluatorInfo info() const = 0;
  /// Precondition: inputs.size() == n·input_width, legal.size() == n, outputs.size() == n·output_width,
  /// 1 ≤ n ≤ max_batch.
  virtual void evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) = 0;
};

/// Replaces every non-finite value of `outputs` (NaN, ±inf) by 0 — a zero advantage, a uniform
/// logit — and returns how many it replaced: what an evaluator of a real network (nets/'
/// TorchEvaluator, python/'s PyEvaluator) does to every forward's outputs before a traversal
/// reads them, counting them for the numeric-fault report (docs/reliability.md).
std::int64_t replace_nonfinite(std::span<float> outputs) noexcept;

/// Zeros for every output: uniform logits for a strategy net; for regret matching every
/// advantage is 0, so the fallback decides.
class UniformEvaluator final : public Evaluator {
 public:
  UniformEvaluator(int input_width, int output_width) : info_{input_width, output_width, 1, kMaxEvaluatorBatch} {}
  EvaluatorInfo info() const override { return info_; }
  void evaluate(std::span<const float>, std::span<const ActionMask>, std::span<float> outputs) override;

 private:
  EvaluatorInfo info_;
};

/// Pseudo-random outputs in [−1, 1) hashed from the exact bits of each input row and the output
/// index (lc0's `random` backend): deterministic, independent of batching. An optional latency
/// is added per evaluate() call (spinning, so it is precise), to mimic a GPU forward.
class HashEvaluator final : public Evaluator {
 public:
  HashEvaluator(int input_width, int output_width, std::uint64_t seed = 0, double latency_us = 0.0, int preferred_batch = 1,
                int max_batch = kMaxEvaluatorBatch)
      : info_{input_width, output_width, preferred_batch, max_batch}, seed_(seed), latency_us_(latency_us) {}
  EvaluatorInfo info() const override { return info_; }
  void evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) override;
  /// The output row for one input row (what evaluate writes).
  void evaluate_row(const float* input, float* output) const;

 private:
  EvaluatorInfo info_;
  std::uint64_t seed_;
  double latency_us_;
};

/// A table of output rows keyed by the exact input row (an information state): tabular regrets
/// or strategy sums. evaluate() returns the stored row (zeros if absent). add() is not
/// thread-safe and must not run while a batch is evaluated (tabular MCCFR applies a phase's
/// samples between phases).
class TabularEvaluator final : public Evaluator {
 public:
  TabularEvaluator(int input_width, int output_width) : info_{input_width, output_width, 1, kMaxEvaluatorBatch} {}
  EvaluatorInfo info() const override { return info_; }
  void evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) override;
  /// row(input) += weight · values (output_width floats).
  void add(const float* input, const float* values, double weight = 1.0);
  /// The stored row, or nullptr.
  const double* find(const float* input) const;
  std::size_t size() const noexcept { return index_.size(); }

 private:
  std::string key(const float* input) const;
  EvaluatorInfo info_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<double> rows_;
};

}  // namespace cfr
