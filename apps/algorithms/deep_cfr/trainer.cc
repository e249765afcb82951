#include "apps/algorithms/deep_cfr/trainer.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/algorithms/context.h"
#include "apps/algorithms/deep_cfr/escher_networks.h"
#include "apps/algorithms/deep_cfr/escher_value_error.h"
#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/overlap.h"
#include "apps/algorithms/run_steps.h"
#include "apps/players/checkpoint_policy.h"
#include "apps/players/evaluation.h"
#include "apps/run/checkpoint_format.h"
#include "apps/run/distributed.h"
#include "apps/run/run_files.h"
#include "apps/run/snapshots.h"
#include "engine/core/checksum.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"
#include "engine/games/games.h"
#include "engine/games/match.h"
#include "engine/memory/reservoir.h"
#include "engine/tabular/best_response.h"
#include "engine/traversal/escher.h"
#include "sched/phase_shares.h"
#include "sched/sample_pipe.h"
#include "sched/worker_thread.h"

namespace cfr {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Inserts a buffer's samples whose input and target are finite; returns how many were dropped.
/// With `poison_first` the first sample's target gets a NaN first (fault injection).
std::int64_t insert_finite(ReservoirMemory& mem, const SampleBuffer& b, bool poison_first) {
  std::int64_t dropped = 0;
  const int in_w = mem.input_width(), out_w = mem.target_width();
  std::vector<float> poisoned;
  for (int i = 0; i < b.size(); ++i) {
    const float* input = b.input(i);
    const float* target = b.target(i);
    if (poison_first && i == 0) {
      poisoned.assign(target, target + out_w);
      poisoned[0] = std::nanf("");
      target = poisoned.data();
    }
    bool finite = true;
    for (int k = 0; k < in_w && finite; ++k) finite = std::isfinite(input[k]);
    for (int k = 0; k < out_w && finite; ++k) finite = std::isfinite(target[k]);
    if (!finite) {
      ++dropped;
      continue;
    }
    mem.insert(input, target, b.masks[static_cast<std::size_t>(i)], b.iterations[static_cast<std::size_t>(i)]);
  }
  return dropped;
}

/// The learner's own state: memories, the trainer thread and the run directory's files.
struct LearnerState {
  LearnerState(std::uint64_t seed, const DeepCfrOptions& o, int W, int A)
      : adv0(o.advantage_capacity, W, A, derive_seed(seed, kAdvantageMemoryStream, 0)),
        adv1(o.advantage_capacity, W, A, derive_seed(seed, kAdvantageMemoryStream, 1)),
        strat(o.strategy_capacity, W, A, derive_seed(seed, kStrategyMemoryStream)),
        train_rng(derive_seed(seed, kTrainerStream)) {
    if (o.escher) value.emplace(o.escher->value_capacity, 2 * W, A, derive_seed(seed, kValueMemoryStream));
  }
  ReservoirMemory& advantage(int p) { return p == 0 ? adv0 : adv1; }

  ReservoirMemory adv0, adv1, strat;
  std::optional<ReservoirMemory> value;  // ESCHER's: this iteration's value samples only
  // memory.merge_duplicates: each training draws from its memory's samples merged per input
  // (MergedSamples, rebuilt from the memory's content first), whose weight column already holds
  // each row's total weight under the run's weighting.
  std::array<MergedSamples, kNumNets> merged;
  bool warned_distinct = false;
  Rng train_rng;
};

/// What one iteration gathers on its way (its metrics line, digests, training results).
struct IterationState {
  int it = 0;
  SampleDigest digest_adv, digest_strat, digest_value;  // per stream: independent of how blocks are cut
  std::int64_t nodes = 0;
  std::int64_t traversals = 0, cutoffs = 0;  // cutoffs: traversals ended by the node cap
  double traversal_s = 0, train_s = 0, adv0_train_s = 0, strat_train_s = 0;
  double value_phase_s = 0, value_train_s = 0;  // ESCHER's value step
  std::int64_t value_cutoffs = 0, value_traversals = 0;
  BatchStats batch;
  std::array<TrainStats, kNumEscherNets> ts;  // per network of the set (Deep CFR's: the first 3)
  // Each network's batches come from its own stream, drawn from the checkpointed trainer RNG
  // at the start of the iteration: results do not depend on which thread trains what.
  std::array<Rng, kNumEscherNets> net_rng;
  std::array<std::int64_t, kNumEscherNets> dropped{};  // samples with non-finite values, per memory
  bool poisoned = false;
  bool trainer_busy = false;  // a training job runs on the trainer thread
};

/// deep_cfr.overlap: one iteration's traversals played ahead, while the iteration before trains.
/// Each player's phase keeps its samples in traversal-index order until that iteration starts and
/// inserts them (the memories' reservoirs then draw as if the phase had just run); the buffers
/// keep their capacity from iteration to iteration.
struct StagedTraversals {
  int iteration = 0;  // the iteration whose traversals these are (0: none)
  std::array<SampleBuffer, 2> advantage, strategy;
  std::array<RunStats, 2> stats;
  std::array<double, 2> seconds{};
  std::int64_t bytes() const {
    std::int64_t b = 0;
    for (const auto* buffers : {&advantage, &strategy})
      for (const SampleBuffer& x : *buffers)
        b += static_cast<std::int64_t>((x.inputs.capacity() + x.targets.capacity()) * sizeof(float) +
                                       x.masks.capacity() * sizeof(ActionMask) + x.iterations.capacity() * sizeof(std::int32_t) +
                                       x.players.capacity());
    return b;
  }
};

template <TraversalAdapter G>
class DeepCfrTrainer final : public Trainer {
 public:
  /// `specs`: the registration's network set for this game (Deep CFR's three, ESCHER's four).
  DeepCfrTrainer(const RunOptions& run, const DeepCfrOptions& o, const NetworkSpecs& specs, const TrainerIo& io, G game)
      : run_(run),
        o_(o),
        io_(io),
        game_(std::move(game)),
        W_(game_.input_width()),
        A_(game_.num_actions()),
        nets_(specs, network_for_this_rank(run.network, io.dist), run.seed),  // a rank's own GPU
        scheduler_(make_scheduler(run.scheduler, run.scheduler_options)) {
    configure_torch_threads(run.torch_threads);
    if (o.overlap && io.dist != nullptr)
      throw InputError(
          "deep_cfr.overlap = true runs in one process: under mpirun the ranks traverse while the learner trains; set "
          "deep_cfr.overlap = false or run one process");
    CFR_CHECK(!(o.overlap && o.escher), "deep_cfr.overlap with ESCHER (refused by the config's checks)");
    adv_train_ = o.advantage_training;
    strat_train_ = o.strategy_training;
    if (o.escher) value_train_ = o.escher->value_training;
    adv_train_.stop = strat_train_.stop = value_train_.stop = io.stop;  // seen between training steps too
    if (learner()) {
      learner_.emplace(run.seed, o, W_, A_);
      // A distributed learner does not traverse: its share count stays 1. Each share reads its
      // own replica of the published networks.
      const int shares = std::max(1, std::min(io.dist != nullptr ? 1 : o.parallel_shares, o.traversals_per_player));
      nets_.set_replicas(shares);
      std::vector<std::vector<Evaluator*>> evaluators;
      for (int k = 0; k < shares; ++k) evaluators.push_back(nets_.evaluators(k));
      shares_.emplace(
          std::move(evaluators), o.traversals_per_player, *scheduler_,
          [this] { return make_scheduler(run_.scheduler, run_.scheduler_options); },
          [this](int it, int p, TraversalShare s) { return phase_job(it, p, s); });
      if constexpr (EnumerableGame<typename G::State>) tree_.emplace(build_game_tree(run.shape.game));
    }
  }

  int restore(const std::string& ck) override {
    CFR_CHECK(learner_.has_value(), "restore on a traversal rank");
    auto& L = *learner_;
    const CheckpointMeta meta = read_checkpoint_meta(ck, run_.shape, nets_.specs());
    nets_.load((fs::path(ck) / "nets.pt").string());
    L.train_rng.set_state(meta.train_rng);
    // Single Deep CFR's average is over every iteration's snapshot (apps/run/snapshots.h): without
    // one, the resumed run would average other iterations than an uninterrupted one.
    if (o_.keep_snapshots)
      require_snapshots(io_.run_dir, 1, meta.iteration, io_.run_dir, "advantage snapshot",
                        "average the iterations without it (Single Deep CFR). Restore it, start a new run, or resume with "
                        "--set checkpoint.keep_snapshots=false");
    if (meta.memories) {
      const std::string mw = (fs::path(ck) / "memories.bin").string();
      std::ifstream in(mw, std::ios::binary);
      if (!in) throw InputError(fmt::format("{}: cannot open", mw));
      read_checkpoint_memories(in, mw, L.adv0, L.adv1, L.strat);
    }
    if (o_.overlap) {  // the next iteration's traversals, played ahead: played again as train() starts
      resume_pending_ =
          read_overlap_files(ck, "deep_cfr.overlap", meta.iteration + 1, static_cast<std::size_t>(nets_.total_parameters()));
      resume_checkpoint_ = ck;
    }
    return meta.iteration;
  }

  int train(int first, nlohmann::json first_metrics, const std::string& note) override {
    ctx_.start(first,
               fmt::format("cfr-run: {} on {} — {} iterations × {} traversals per player; networks {}×{} ({} parameters each); "
                           "scheduler {} ({}); run dir {}",
                           run_.experiment_name, run_.shape.game, run_.max_iterations, o_.traversals_per_player,
                           run_.network.num_layers, run_.network.hidden_size, nets_.parameters(0), run_.scheduler,
                           run_.scheduler_options.describe(), io_.run_dir),
               note);
    if (o_.keep_snapshots) restore_snapshots(first - 1);
    if (o_.overlap)
      say("deep_cfr.overlap: iteration t + 1's traversals run while iteration t's networks train, against the networks "
          "published after iteration t - 1 (one iteration stale)");
    if (resume_pending_) try {
        replay_pending_traversals();
      } catch (const StepInterrupted&) {
        say(fmt::format("cfr-run: interrupted while playing again iteration {}'s traversals; the last checkpoint is iteration {}",
                        first, first - 1));
        return first - 1;
      }
    const int done = ctx_.run(
        [&](int it) {
          begin_iteration(it, std::exchange(first_metrics, nullptr));
          if (escher()) value_step();
          if (staged_.iteration == it) {
            absorb_staged();  // played during the iteration before (deep_cfr.overlap)
          } else {
            for (int p = 0; p < 2; ++p) traversal_phase(p);
          }
          if (o_.overlap) launch_traversals(it + 1);
          train_networks();
          if (o_.overlap) join_traversals();
          publish();
          keep_snapshot();
          collect_numeric_faults();
          evaluate();
          write_metrics();
          check_numeric_faults();
          write_checkpoint();
          print_iteration();
        },
        [this] {
          wait_for_trainer();
          try {
            roller_.wait();
          } catch (...) {  // an interrupted step: the run ends at the last checkpoint
          }
        });
    if (io_.dist != nullptr) io_.dist->broadcast(std::int64_t{0});  // the traversal ranks stop
    return done;
  }

  int serve_learner() override {
    Distributed& dist = *io_.dist;
    int iterations = 0;
    std::vector<float> weights;
    while (dist.broadcast(std::int64_t{0}) != 0) {
      const int it = static_cast<int>(dist.broadcast(std::int64_t{0}));
      receive_weights(weights);
      if (escher()) {  // ESCHER's value trajectories, then the value net the learner trained on them
        const TraversalShare share = traversal_share(o_.escher->value_traversals, dist.rank(), dist.size());
        SamplePipe pipe(2 * W_, A_, run_.pipe, [&](const SampleBlock& b) { dist.send_block(b, share.first); });
        const RunStats st = scheduler_->run(value_job(it, share), nets_.evaluators(), pipe, nullptr);
        pipe.flush();
        dist.send_phase_end(st);
        dist.serve_training(nets_);  // a data-parallel learner rank: its shards of the value net's batches
        receive_weights(weights);
      }
      for (int p = 0; p < 2; ++p) {
        if (p == 1 && o_.update_order == UpdateOrder::kAlternating) {
          dist.serve_training(nets_);  // advantage net 0's
          receive_weights(weights);
        }
        const TraversalShare share = traversal_share(o_.traversals_per_player, dist.rank(), dist.size());
        SamplePipe pipe(W_, A_, run_.pipe, [&](const SampleBlock& b) { dist.send_block(b, share.first); });
        const RunStats st = scheduler_->run(phase_job(it, p, share), nets_.evaluators(), pipe, nullptr);
        pipe.flush();
        dist.send_phase_end(st);
      }
      dist.serve_training(nets_);  // the iteration's training (data-parallel learner ranks)
      ++iterations;
    }
    return iterations;
  }

  ~DeepCfrTrainer() override {
    wait_for_trainer();
    try {
      roller_.wait();
    } catch (...) {
    }
  }

 private:
  bool learner() const { return io_.dist == nullptr || io_.dist->learner(); }
  /// distributed.learners > 1: ranks 1..N-1 train their shards of every batch beside the learner;
  /// the learner then trains its networks one after another on its main thread (the thread that
  /// makes its MPI calls).
  bool data_parallel() const { return io_.dist != nullptr && io_.dist->learners() > 1; }
  /// Network `net`'s training of this iteration (with the learner ranks when data-parallel).
  TrainStats train_net(int net, BatchSource& source, const TrainConfig& cfg, Rng& rng) {
    return data_parallel() ? io_.dist->train(nets_, net, source, iter_.it, cfg, rng)
                           : nets_.train(net, source, iter_.it, cfg, rng);
  }

  TraversalJob phase_job(int it, int player, TraversalShare share) const {
    return {.iteration = it,
            .traverser = player,
            .num_traversals = share.count,
            .first_index = share.first,
            .seed = run_.seed,
            .input_width = W_,
            .output_width = A_,
            .start = [this](TraversalContext& ctx) {
              return escher() ? escher_regret_traversal(ctx, game_, o_.escher->traversal) : traverse(ctx, game_, o_.traversal);
            }};
  }
  /// ESCHER's value trajectories of iteration `it` (`share` of them; a traversal rank's share of a
  /// distributed run): their own RNG streams (job seed derive_seed(seed, kValueTrajectoryStream,
  /// it), trajectory i's stream from its global index), history inputs (2·W).
  TraversalJob value_job(int it, TraversalShare share) const {
    return {.iteration = it,
            .traverser = 0,
            .num_traversals = share.count,
            .first_index = share.first,
            .seed = derive_seed(run_.seed, kValueTrajectoryStream, static_cast<std::uint64_t>(it)),
            .input_width = 2 * W_,
            .output_width = A_,
            .start = [this](TraversalContext& ctx) { return escher_value_traversal(ctx, game_, o_.escher->traversal); }};
  }
  bool escher() const noexcept { return o_.escher.has_value(); }

  void say(const std::string& line) { ctx_.say(line); }

  // --- the distributed protocol: one home for both sides ------------------------------------
  /// Learner: the iteration, then the published weights, to every traversal rank.
  void announce_iteration() {
    io_.dist->broadcast(std::int64_t{1});
    io_.dist->broadcast(std::int64_t{iter_.it});
    share_weights();
    ctx_.metrics()["ranks"] = io_.dist->size();
    if (data_parallel()) ctx_.metrics()["learners"] = io_.dist->learners();
  }
  void share_weights() {
    std::vector<float> weights = nets_.published_weights();
    io_.dist->broadcast(weights);
  }
  void receive_weights(std::vector<float>& weights) {
    io_.dist->broadcast(weights);
    nets_.set_published_weights(weights);
  }

  // --- the steps of an iteration --------------------------------------------------------------
  void begin_iteration(int it, nlohmann::json extra) {
    auto& L = *learner_;
    iter_ = IterationState();
    iter_.it = it;
    ctx_.begin_iteration(it, std::move(extra));
    iter_.net_rng = {Rng(L.train_rng()), Rng(L.train_rng()), Rng(L.train_rng()), Rng()};
    if (escher()) iter_.net_rng[kValueNet] = Rng(L.train_rng());
    if (run_.learning_rate_decay_iterations > 0) {
      const double lr = o_.advantage_training.learning_rate /
                        std::sqrt(1.0 + (it - 1) / static_cast<double>(run_.learning_rate_decay_iterations));
      adv_train_.learning_rate = strat_train_.learning_rate = value_train_.learning_rate = lr;
      ctx_.metrics()["learning_rate"] = lr;
    }
    if (it == run_.nonfinite_weights_iteration) nets_.inject_nonfinite_weights(advantage_net(0));
    if (io_.dist != nullptr) announce_iteration();
  }

  /// ESCHER: the value trajectories of the current profile (the published regret networks) fill
  /// the value memory from nothing; the value network trains on them and is published, so that
  /// the regret phases that follow read q̂ of this iteration's profile. In a distributed run the
  /// traversal ranks run the trajectories (their shares, samples in rank order) and receive the
  /// published weights again before the regret phases.
  void value_step() {
    auto& L = *learner_;
    auto& mem = *L.value;
    mem.reset(derive_seed(run_.seed, kValueMemoryStream, static_cast<std::uint64_t>(iter_.it)));
    const auto t_phase = Clock::now();
    auto consume = [&](const SampleBlock& b) {
      iter_.digest_value.add(b.advantage);
      iter_.dropped[kValueNet] += insert_finite(mem, b.advantage, false);
    };
    RunStats st;
    if (io_.dist != nullptr) {
      st = io_.dist->receive_phase(2 * W_, A_, consume, run_.distributed_timeout_seconds,
                                   fmt::format("iteration {}, value trajectories", iter_.it));
    } else {
      SamplePipe pipe(2 * W_, A_, run_.pipe, consume);
      st = scheduler_->run(value_job(iter_.it, {.first = 0, .count = o_.escher->value_traversals}), nets_.evaluators(), pipe,
                           io_.stop);
      pipe.flush();
    }
    iter_.value_phase_s = since(t_phase);
    iter_.value_cutoffs = st.cutoffs;
    iter_.value_traversals = st.traversals;
    iter_.nodes += st.nodes;
    iter_.batch.merge(st.batch);
    if (st.stopped) throw StepInterrupted{"value trajectories"};
    const auto t_train = Clock::now();
    if (o_.escher->reinitialize_value) nets_.reinitialize(kValueNet, iter_.it);
    iter_.ts[kValueNet] = train_net(kValueNet, mem, value_train_, iter_.net_rng[kValueNet]);
    if (iter_.ts[kValueNet].stopped) throw StepInterrupted{"value training"};
    nets_.publish(kValueNet);
    if (io_.dist != nullptr) share_weights();
    iter_.value_train_s = since(t_train);
    if constexpr (EnumerableGame<typename G::State>) {
      if (ctx_.evaluation_iteration()) {  // the value net against the exact q of the profile it evaluates
        const ValueError e = value_error(game_, nets_.evaluator(kAdvantageNet0), nets_.evaluator(kAdvantageNet1),
                                         nets_.evaluator(kValueNet), o_.escher->traversal);
        ctx_.metrics()["value_error"] = {{"mean_abs_error", e.mean_abs_error},
                                         {"mean_abs_q", e.mean_abs_q},
                                         {"regret_error", e.regret_error},
                                         {"mean_abs_regret", e.mean_abs_regret}};
        ctx_.eval_text() += fmt::format("  value error {:.3f} (|q| {:.3f}; regret error {:.3f}, |r| {:.3f})", e.mean_abs_error,
                                        e.mean_abs_q, e.regret_error, e.mean_abs_regret);
      }
    }
  }

  /// Player p's traversal phase: local shares, or the traversal ranks' samples in rank order.
  /// Before player 1's: with alternating updates advantage net 0 trains and is published first;
  /// with simultaneous updates on one traversal thread it trains on the trainer thread meanwhile
  /// (traversals read only the published snapshots; player 1's phase never touches memory 0).
  void traversal_phase(int p) {
    if (p == 1 && o_.update_order == UpdateOrder::kAlternating) {
      iter_.adv0_train_s = train_advantage(0);
      nets_.publish(advantage_net(0));
      if (io_.dist != nullptr) share_weights();
    } else if (p == 1 && adv0_during_phase1()) {
      trainer_.submit([this] { iter_.adv0_train_s = train_advantage(0); });
      iter_.trainer_busy = true;
    }
    const auto t_phase = Clock::now();
    auto last_print = Clock::now();
    auto consume = [&](const SampleBlock& b) {
      absorb(p, b.advantage, b.strategy);
      if (io_.progress && since(last_print) > 0.25) {  // a live line on a terminal (consumer thread)
        last_print = Clock::now();
        const int n = b.last_traversal + 1, total = o_.traversals_per_player;
        const double rate = n / std::max(1e-9, since(t_phase));
        std::fprintf(stderr, "\r  iteration %d/%d  player %d  [%-30s] %d/%d traversals  %.0f/s  phase ETA %.0fs   ", iter_.it,
                     run_.max_iterations, p, progress_bar(n, total).c_str(), n, total, rate, (total - n) / std::max(rate, 1e-9));
      }
    };
    RunStats st;
    if (io_.dist != nullptr) {
      st = io_.dist->receive_phase(W_, A_, consume, run_.distributed_timeout_seconds,
                                   fmt::format("iteration {}, player {}", iter_.it, p));
    } else {
      SamplePipe pipe(W_, A_, run_.pipe, consume);
      st = shares_->run(iter_.it, p, pipe, io_.stop);
      pipe.flush();
    }
    if (io_.progress) std::fprintf(stderr, "\r%100s\r", "");
    count_phase(p, st, since(t_phase));
  }

  /// Player p's samples of this iteration (a block of its phase, or the whole phase played
  /// ahead), in traversal-index order, into the memories.
  void absorb(int p, const SampleBuffer& advantage, const SampleBuffer& strategy) {
    auto& L = *learner_;
    iter_.digest_adv.add(advantage);
    iter_.digest_strat.add(strategy);
    const bool poison = iter_.it == run_.nonfinite_target_iteration && p == 0 && !iter_.poisoned && advantage.size() > 0;
    iter_.poisoned = iter_.poisoned || poison;
    iter_.dropped[static_cast<std::size_t>(p)] += insert_finite(L.advantage(p), advantage, poison);
    iter_.dropped[kStrategyNet] += insert_finite(L.strat, strategy, false);
  }
  /// Player p's phase of this iteration ran `seconds` with these stats.
  void count_phase(int p, const RunStats& st, double seconds) {
    iter_.traversal_s += seconds;
    iter_.nodes += st.nodes;
    iter_.traversals += st.traversals;
    iter_.cutoffs += st.cutoffs;
    iter_.batch.merge(st.batch);
    ctx_.metrics()[fmt::format("traversal_seconds_p{}", p)] = seconds;
    if (st.stopped) throw StepInterrupted{"traversals"};
  }

  // --- deep_cfr.overlap: the next iteration's traversals while this one trains ----------------
  /// Iteration k's two phases, on roller_ (or, resuming, here), against the published networks:
  /// their samples into staged_. Touches neither the memories nor the iteration's metrics.
  void play_ahead(int k) {
    for (int p = 0; p < 2; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      SampleBuffer& adv = staged_.advantage[pu];
      SampleBuffer& strat = staged_.strategy[pu];
      adv.configure(W_, A_);
      strat.configure(W_, A_);
      const auto t = Clock::now();
      SamplePipe pipe(W_, A_, run_.pipe, [&](const SampleBlock& b) {
        adv.append(b.advantage);
        strat.append(b.strategy);
      });
      staged_.stats[pu] = shares_->run(k, p, pipe, io_.stop);
      pipe.flush();
      staged_.seconds[pu] = since(t);
      if (staged_.stats[pu].stopped) throw StepInterrupted{"traversals"};
    }
    staged_.iteration = k;
  }
  /// Iteration k's traversals start on roller_ against the networks published now (those of
  /// iteration k − 2: this iteration's training publishes after join_traversals).
  void launch_traversals(int k) {
    staged_.iteration = 0;
    pending_weights_ = nets_.published_weights();  // what a resume needs to play them again
    roller_.submit([this, k] { play_ahead(k); });
  }
  /// Waits for the traversals played ahead (rethrowing what stopped them). The time spent waiting
  /// is the overlap's cost.
  void join_traversals() {
    const auto t0 = Clock::now();
    roller_.wait();
    ctx_.metrics()["traversal_wait_seconds"] = since(t0);
  }
  /// This iteration's samples, played during the iteration before, into the memories.
  void absorb_staged() {
    for (int p = 0; p < 2; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      absorb(p, staged_.advantage[pu], staged_.strategy[pu]);
      count_phase(p, staged_.stats[pu], staged_.seconds[pu]);
    }
    staged_.iteration = 0;
  }
  /// A resumed overlapped run: the checkpoint's next traversals played again against the weights
  /// they were played against (its overlap files), then the checkpoint's networks back.
  void replay_pending_traversals() {
    nets_.set_published_weights(resume_pending_->weights);  // plays exactly these (a weight average dropped)
    pending_weights_ = std::move(resume_pending_->weights);
    const int k = resume_pending_->iteration;
    resume_pending_.reset();
    play_ahead(k);
    nets_.load((fs::path(resume_checkpoint_) / "nets.pt").string());
  }

  bool adv0_during_phase1() const {
    return o_.update_order == UpdateOrder::kSimultaneous && shares_->count() == 1 && !data_parallel() && !o_.overlap;
  }

  BatchSource& batches(ReservoirMemory& mem, MergedSamples& view) const {
    if (!o_.merge_duplicates) return mem;
    view.rebuild(mem, o_.linear_weighting);
    return view;
  }
  TrainConfig merged_config(TrainConfig c) const {
    if (o_.merge_duplicates) c.linear_weighting = true;
    return c;
  }
  double train_advantage(int q) {
    auto& L = *learner_;
    const auto t = Clock::now();
    const int net = advantage_net(q);
    if (o_.reinitialize_advantage) nets_.reinitialize(net, iter_.it);
    iter_.ts[static_cast<std::size_t>(net)] = train_net(net, batches(L.advantage(q), L.merged[static_cast<std::size_t>(net)]),
                                                        merged_config(adv_train_), iter_.net_rng[static_cast<std::size_t>(net)]);
    return since(t);
  }
  void wait_for_trainer() {
    if (!iter_.trainer_busy) return;
    iter_.trainer_busy = false;
    try {
      trainer_.wait();
    } catch (...) {  // already unwinding or interrupted: the first error is the one reported
    }
  }

  /// Advantage net 1 (here) and the strategy net (trainer thread) train side by side; with
  /// parallel shares and simultaneous updates advantage net 0 trains first on the trainer thread.
  void train_networks() {
    auto& L = *learner_;
    const auto t_train = Clock::now();
    if (iter_.trainer_busy) {
      iter_.trainer_busy = false;
      trainer_.wait();
    }
    const double adv0_wait_s = since(t_train);  // what remained of adv 0's training after the phase
    auto adv0_and_strategy = [this, &L] {
      if (o_.update_order == UpdateOrder::kSimultaneous && !adv0_during_phase1()) iter_.adv0_train_s = train_advantage(0);
      const auto t_strat = Clock::now();
      iter_.ts[kStrategyNet] = train_net(kStrategyNet, batches(L.strat, L.merged[kStrategyNet]), merged_config(strat_train_),
                                         iter_.net_rng[kStrategyNet]);
      iter_.strat_train_s = since(t_strat);
    };
    double adv1_s = 0;
    if (data_parallel()) {  // one network after another, every MPI call from this thread
      adv0_and_strategy();
      adv1_s = train_advantage(1);
    } else {
      trainer_.submit(adv0_and_strategy);
      iter_.trainer_busy = true;
      adv1_s = train_advantage(1);
      iter_.trainer_busy = false;
      trainer_.wait();
    }
    for (const auto& t : iter_.ts)
      if (t.stopped) throw StepInterrupted{"training"};
    iter_.train_s = since(t_train);
    auto& m = ctx_.metrics();
    m["train_seconds_advantage"] = {iter_.adv0_train_s, adv1_s};
    m["train_seconds_strategy"] = iter_.strat_train_s;
    m["train_seconds_adv0_after_phase"] = adv0_wait_s;
    if (o_.merge_duplicates) {  // rows at each view's last rebuild, against its memory's samples
      const std::array<std::int64_t, 3> sizes{L.adv0.size(), L.adv1.size(), L.strat.size()};
      m["merged_rows"] = {L.merged[0].rows(), L.merged[1].rows(), L.merged[2].rows()};
      for (std::size_t q = 0; q < 3 && !L.warned_distinct; ++q)
        if (sizes[q] >= 10000 && 2 * L.merged[q].rows() > sizes[q]) {
          L.warned_distinct = true;
          say(
              fmt::format("cfr-run: warning: memory.merge_duplicates: {} of the {} samples of memory {} have distinct inputs: "
                          "merging gains little here and keeps a copy of each input (it pays where inputs repeat, as in "
                          "Kuhn and Leduc)",
                          L.merged[q].rows(), sizes[q], q));
        }
    }
  }

  void publish() { nets_.publish(); }

  // --- Single Deep CFR's snapshots (apps/run/snapshots.h) -----------------------------
  std::int64_t snapshot_floats() const { return nets_.parameters(kAdvantageNet0) + nets_.parameters(kAdvantageNet1); }
  double snapshot_weight(int it) const { return o_.linear_weighting ? it : 1.0; }
  /// This iteration's published advantage nets to run_dir/snapshots, and on enumerable games into
  /// the exact snapshot average.
  void keep_snapshot() {
    if (!o_.keep_snapshots) return;
    const std::vector<float> w = nets_.published_weights();  // set order: advantage nets 0 and 1 first
    write_snapshot(io_.run_dir, iter_.it, std::span<const float>(w.data(), static_cast<std::size_t>(snapshot_floats())));
    if (tree_) {
      add_snapshot_policy(*tree_, nets_.evaluator(kAdvantageNet0), nets_.evaluator(kAdvantageNet1), snapshot_weight(iter_.it),
                          o_.traversal.fallback, o_.traversal.rm_epsilon, snapshot_sums_);
      ++snapshots_used_;
    }
  }
  /// A (resumed) run continuing after iteration `last`: later snapshots go; on enumerable games
  /// the exact average is rebuilt from the snapshots kept.
  void restore_snapshots(int last) {
    trim_snapshots(io_.run_dir, last);
    if (!tree_ || last == 0) return;
    NetworkSpecs two(nets_.specs().begin(), nets_.specs().begin() + 2);
    NetworkSet snap(two, run_.network, run_.seed);
    for (const auto& [it, path] : list_snapshots(io_.run_dir)) {
      snap.set_published_weights(read_snapshot(path, snapshot_floats()));
      add_snapshot_policy(*tree_, snap.evaluator(0), snap.evaluator(1), snapshot_weight(it), o_.traversal.fallback,
                          o_.traversal.rm_epsilon, snapshot_sums_);
      ++snapshots_used_;
    }
  }

  /// The shared evaluation of the strategy network (exact on Kuhn/Leduc, bots on Lost Cities),
  /// with Deep CFR's fit diagnostics on enumerable games.
  void evaluate() {
    auto& L = *learner_;
    ctx_.evaluate(nets_.evaluator(kStrategyNet), game_, tree_ ? &*tree_ : nullptr, [&] {
      auto& m = ctx_.metrics();
      // What a perfect fit of the strategy net would score: the t-weighted average of the
      // strategy memory's samples (the gap between the two is the net's fitting error).
      const double mem_x = exploitability(sample_average_policy(*tree_, L.strat, o_.linear_weighting)).exploitability;
      m["exploitability_memory_average"] = mem_x;
      const auto& to = o_.traversal;
      m["advantage_fit_l1"] = {
          advantage_fit_l1(*tree_, nets_.evaluator(advantage_net(0)), L.adv0, 0, o_.linear_weighting, to.fallback, to.rm_epsilon),
          advantage_fit_l1(*tree_, nets_.evaluator(advantage_net(1)), L.adv1, 1, o_.linear_weighting, to.fallback,
                           to.rm_epsilon)};
      ctx_.eval_text() += fmt::format("  memory average {:.4f}", mem_x);
      if (o_.keep_snapshots) {  // Single Deep CFR's average: no strategy network in between
        const double sx = exploitability(snapshot_average_policy(*tree_, snapshot_sums_)).exploitability;
        m["exploitability_snapshots"] = sx;
        m["snapshots"] = snapshots_used_;
        ctx_.eval_text() += fmt::format("  snapshot average {:.4f}", sx);
      }
    });
  }

  void write_metrics() {
    auto& L = *learner_;
    auto& m = ctx_.metrics();
    const auto& ts = iter_.ts;
    {  // the training's own compute vs. the rest
      double sample = 0, fb = 0, step = 0, exchange = 0, total = 0;
      for (const auto& t : ts) {
        sample += t.sample_seconds;
        fb += t.forward_backward_seconds;
        step += t.step_seconds;
        exchange += t.exchange_seconds;
        total += t.seconds;
      }
      m["train_breakdown"] = {
          {"sample_seconds", sample}, {"forward_backward_seconds", fb}, {"step_seconds", step}, {"total_seconds", total}};
      if (data_parallel()) m["train_breakdown"]["exchange_seconds"] = exchange;
    }
    m["traversal_seconds"] = iter_.traversal_s;
    m["train_seconds"] = iter_.train_s;
    m["nodes"] = iter_.nodes;
    // The share of traversals valued at the node cap instead of the game's end (issue 17's first
    // suspect: a cut-off is worth the current score difference, docs/strength.md).
    m["cutoff_share"] = iter_.traversals > 0 ? static_cast<double>(iter_.cutoffs) / static_cast<double>(iter_.traversals) : 0.0;
    m["nodes_per_second"] = iter_.traversal_s > 0 ? iter_.nodes / iter_.traversal_s : 0.0;
    m["batch_mean"] = iter_.batch.mean_batch();
    m["forwards"] = iter_.batch.forwards;
    m["sample_digest"] = fmt::format("{:016x}", digest());
    m["loss_advantage"] = {ts[0].mean_loss, ts[1].mean_loss};
    m["loss_strategy"] = ts[2].mean_loss;
    m["grad_norm"] = {ts[0].mean_grad_norm, ts[1].mean_grad_norm, ts[2].mean_grad_norm};
    if (escher()) {
      const auto& v = ts[kValueNet];
      m["value"] = {{"loss", v.mean_loss},
                    {"grad_norm", v.mean_grad_norm},
                    {"samples", L.value->size()},
                    {"samples_seen", L.value->seen()},
                    {"trajectories", iter_.value_traversals},
                    {"cutoff_share", iter_.value_traversals > 0
                                         ? static_cast<double>(iter_.value_cutoffs) / static_cast<double>(iter_.value_traversals)
                                         : 0.0},
                    {"phase_seconds", iter_.value_phase_s},
                    {"train_seconds", iter_.value_train_s}};
    }
    for (int n = 0; n < nets_.size(); ++n) ctx_.record_loss(nets_.spec(n).name, ts[static_cast<std::size_t>(n)].mean_loss);
    m["clipped_steps"] = {ts[0].clipped_steps, ts[1].clipped_steps, ts[2].clipped_steps};
    m["skipped_nonfinite_steps"] = ts[0].skipped_nonfinite + ts[1].skipped_nonfinite + ts[2].skipped_nonfinite;
    m["memory_size"] = {L.adv0.size(), L.adv1.size(), L.strat.size()};
    m["memory_bytes"] = L.adv0.bytes() + L.adv1.bytes() + L.strat.bytes();
    if (o_.overlap) {
      m["overlap"] = true;
      m["overlap_staged_bytes"] = staged_.bytes();  // the buffers of the traversals played ahead
    }
    ctx_.write_metrics();
  }

  /// Non-finite values (deep-cfr.md "Numeric faults"), per network with counts, before the
  /// evaluation's own forwards (the report's keys are the shared ones: RunContext).
  void collect_numeric_faults() {
    std::vector<NetworkFaultCounts> counts;
    for (int n = 0; n < nets_.size(); ++n) {
      const auto k = static_cast<std::size_t>(n);
      counts.push_back({.samples_dropped = iter_.dropped[k], .steps_skipped = iter_.ts[k].skipped_nonfinite});
    }
    ctx_.collect_numeric_faults(nets_, counts);
  }

  std::uint64_t digest() const {
    SampleDigest d = iter_.digest_adv;
    d.add(iter_.digest_strat.value());
    if (escher()) d.add(iter_.digest_value.value());
    return d.value();
  }

  /// The policy decides whether the run goes on; non-finite weights always stop it (before the
  /// iteration is checkpointed).
  void check_numeric_faults() { ctx_.check_numeric_faults(); }

  /// Written as a temporary directory and renamed, then `latest` replaced; the files' checksums
  /// (read back from disk) go into meta.json. The previous latest is kept only on save_every
  /// boundaries.
  void write_checkpoint() {
    auto& L = *learner_;
    std::function<void(const std::string&)> write_memories;
    if (run_.include_memories)
      write_memories = [&L](const std::string& path) {
        errno = 0;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        L.adv0.save(out);
        L.adv1.save(out);
        L.strat.save(out);
        out.close();
        // errno is the failed write(2)'s (a full disk: ENOSPC, "No space left on device")
        if (!out)
          throw InputError(fmt::format("{}: cannot write memories: {}", path, errno != 0 ? std::strerror(errno) : "write error"));
      };
    std::vector<std::pair<std::string, std::string>> extra;
    if (staged_.iteration == iter_.it + 1)  // deep_cfr.overlap: the traversals played ahead, played again on resume
      extra = overlap_files({.iteration = staged_.iteration, .fields = nlohmann::json::object(), .weights = pending_weights_});
    ctx_.write_checkpoint(nets_, L.train_rng.state(), std::move(write_memories), std::move(extra));
  }

  void print_iteration() {
    const auto& ts = iter_.ts;
    ctx_.print_iteration(fmt::format(
        "traversal {:.1f}s ({:.0f} nodes/s, batch {:.1f})  train {:.1f}s  loss adv {:.3g}/{:.3g} strat {:.3g}  digest {:016x}{}",
        iter_.traversal_s, iter_.traversal_s > 0 ? iter_.nodes / iter_.traversal_s : 0.0, iter_.batch.mean_batch(), iter_.train_s,
        ts[0].mean_loss, ts[1].mean_loss, ts[2].mean_loss, digest(),
        escher() ? fmt::format("  value {:.1f}s loss {:.3g}", iter_.value_phase_s + iter_.value_train_s, ts[kValueNet].mean_loss)
                 : std::string()));
  }

  const RunOptions run_;
  const DeepCfrOptions o_;
  const TrainerIo io_;
  const G game_;
  const int W_, A_;
  NetworkSet nets_;
  std::unique_ptr<Scheduler> scheduler_;
  TrainConfig adv_train_, strat_train_, value_train_;
  std::optional<LearnerState> learner_;  // the learner's only
  std::optional<PhaseShares> shares_;    // the learner's only
  std::optional<GameTree> tree_;         // enumerable games (exact evaluation)
  std::vector<double> snapshot_sums_;    // enumerable games with keep_snapshots: the exact snapshot average
  int snapshots_used_ = 0;
  IterationState iter_;
  StagedTraversals staged_;                      // deep_cfr.overlap: the next iteration's traversals
  std::vector<float> pending_weights_;           // what staged_'s traversals played against
  std::optional<OverlapRecord> resume_pending_;  // restore(): played again as train() starts
  std::string resume_checkpoint_;                // restore()'s checkpoint (its nets come back after)
  RunContext ctx_{run_, io_};                    // the learner's log, metrics, evaluation, faults, checkpoints
  WorkerThread trainer_;                         // last: joined first, while what its jobs read still exists
  WorkerThread roller_;                          // deep_cfr.overlap's traversals
};

template <class Options>
std::unique_ptr<Trainer> make_trainer(const TrainerSetup& setup, const Options& o) {
  return visit_registered_game(setup.run.shape.game, [&]<class R>(R) -> std::unique_ptr<Trainer> {
    auto game = R::Adapter::from_settings(setup.game);
    return std::make_unique<DeepCfrTrainer<typename R::Adapter>>(
        setup.run, o, setup.algorithm.networks(setup.config, game.input_width(), game.num_actions()), setup.io, std::move(game));
  });
}

}  // namespace

std::unique_ptr<Trainer> make_deep_cfr_trainer(const TrainerSetup& setup) {
  return make_trainer(setup, deep_cfr_options(setup.config));
}

std::unique_ptr<Trainer> make_escher_trainer(const TrainerSetup& setup) {
  DeepCfrOptions o = deep_cfr_options(setup.config);
  o.escher = escher_options(setup.config);
  return make_trainer(setup, o);
}

}  // namespace cfr
