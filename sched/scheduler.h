#pragma once
// Schedulers run one phase's traversals: they start traversal coroutines, route their queries to
// evaluators through batchers, resume them when outputs are ready, and hand finished traversals
// to a sink in index order. Samples never depend on the scheduler: traversal i always draws
// from the RNG stream derive_seed(seed, iteration, traverser, i) and evaluators are pure.
//
// Writing a scheduler: sched/README.md. Contract (tests/sched/contract_test.cc, run against every
// registered scheduler):
//   - every index in [0, num_traversals) runs exactly once and reaches the sink, in index order;
//   - an exception from a traversal, an evaluator or the sink stops the run: every traversal is
//     destroyed (no query may still reference a frame), then run() rethrows it;
//   - when *stop becomes true the run ends early the same way, without an exception;
//   - nothing allocates per query once warm.
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/task.h"
#include "engine/traversal/traversal_context.h"
#include "sched/batcher.h"
#include "sched/evaluator.h"

namespace cfr {

/// A contiguous share of a phase's traversals: [first, first + count).
struct TraversalShare {
  int first = 0;
  int count = 0;
};
/// Share `index` of `shares` contiguous, nearly equal shares of n traversals (⌊n·k/shares⌋ to
/// ⌊n·(k+1)/shares⌋): how a phase is split over threads (parallel shares) and over the traversal
/// ranks of a distributed run alike.
inline TraversalShare share_of(int n, int index, int shares) {
  const auto lo = static_cast<int>(static_cast<std::int64_t>(n) * index / shares);
  const auto hi = static_cast<int>(static_cast<std::int64_t>(n) * (index + 1) / shares);
  return {lo, hi - lo};
}

/// One phase: traversals [0, num_traversals) of (iteration, traverser).
struct TraversalJob {
  int iteration = 1;
  int traverser = 0;
  int num_traversals = 0;
  /// Traversal j of this job draws from the RNG stream of index first_index + j (a distributed
  /// run gives each process a contiguous share); delivery order is j.
  int first_index = 0;
  std::uint64_t seed = 0;
  int input_width = 0;  // sample buffer widths
  int output_width = 0;
  /// Creates the traversal coroutine for a prepared context (ctx.reset has been called).
  std::function<Task<void>(TraversalContext&)> start;
};

/// Receives finished traversals in index order, one at a time (calls are serialised). The
/// context is only valid during the call.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void consume(const TraversalContext& ctx) = 0;
};

struct RunStats {
  BatchStats batch;
  std::int64_t nodes = 0;
  std::int64_t traversals = 0;
  std::int64_t cutoffs = 0;  // traversals ended by the node cap
  double seconds = 0;
  bool stopped = false;  // ended early by the stop flag
  double nodes_per_second() const noexcept { return seconds > 0 ? static_cast<double>(nodes) / seconds : 0.0; }
};

/// Largest window (live traversals) and batch a scheduler option may ask for.
inline constexpr int kMaxSchedulerWindow = kMaxEvaluatorBatch;

/// One option a scheduler declares: an integer with a default and a valid range. cfr-run offers
/// it as `scheduler.<scheduler>.<name>` ([scheduler.<scheduler>] in a config).
struct SchedulerOption {
  std::string name;
  int default_value = 0;
  int min = 0;
  int max = kMaxSchedulerWindow;
  std::string help;
};

/// Values of a scheduler's options by name; options not given take their declared default.
/// make_scheduler() checks each name and range against the scheduler's declaration.
class SchedulerOptions {
 public:
  SchedulerOptions() = default;
  SchedulerOptions(std::initializer_list<std::pair<const std::string, int>> values) : values_(values) {}
  void set(const std::string& name, int value) { values_[name] = value; }
  /// The value of a declared option (make_scheduler fills in defaults); throws std::logic_error
  /// for a name the scheduler did not declare.
  int get(const std::string& name) const;
  const std::map<std::string, int>& values() const noexcept { return values_; }
  /// "name=value, ..." for logs.
  std::string describe() const;

 private:
  std::map<std::string, int> values_;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string_view name() const noexcept = 0;
  /// nets[i] evaluates network i of the algorithm's network set (as many as it declares). Throws
  /// what a traversal, evaluator or the sink threw.
  virtual RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
                       const std::atomic<bool>* stop = nullptr) = 0;
};

/// Traversal contexts kept across phases, so that a warm scheduler allocates nothing: each
/// context keeps its frame arena and sample-buffer capacity. Thread-safe.
class ContextPool {
 public:
  std::unique_ptr<TraversalContext> acquire();
  void release(std::unique_ptr<TraversalContext> c);
  std::size_t size() const;

 private:
  mutable std::mutex m_;
  std::vector<std::unique_ptr<TraversalContext>> free_;
};

/// Finished traversals reach the sink in index order, whatever order they finish in: contexts that
/// finish early wait here; delivered contexts return to the pool. Thread-safe.
class OrderedDelivery {
 public:
  OrderedDelivery(SampleSink& sink, ContextPool& pool) : sink_(sink), pool_(pool) {}
  std::unique_ptr<TraversalContext> acquire();
  /// Hands over a finished traversal; delivers every context that is now next in order.
  void finished(std::unique_ptr<TraversalContext> ctx);
  int delivered() const;

 private:
  SampleSink& sink_;
  ContextPool& pool_;
  mutable std::mutex m_;
  std::map<int, std::unique_ptr<TraversalContext>> parked_;
  int next_ = 0;
};

/// Which network a loop evaluates when no traversal can run: the one with the most pending
/// requests, or one whose requests have waited `starve_rounds` rounds. Traversals of games with a
/// fixed turn structure (Lost Cities: CARD then DRAW by the same player) fall into step this way,
/// so a batch holds nearly every live traversal instead of being split across networks.
class FlushPolicy {
 public:
  explicit FlushPolicy(int starve_rounds = 4) : starve_(starve_rounds) {}
  /// Nets to flush now (bit i = net i), given the batcher's pending counts. Precondition: some
  /// request is pending.
  std::uint64_t choose(const Batcher& b);

 private:
  int starve_;
  std::vector<int> waited_;  // per network of the batcher
};

/// Throws InputError unless a job's traversal indices are valid: num_traversals and first_index
/// at least 0, and first_index + num_traversals within 2^31 - 1 (the indices are ints: past it,
/// first_index + j wrapped). TraversalSlots calls it, so every scheduler refuses such a job before
/// it runs a traversal.
void validate_job(const TraversalJob& job);

/// Prepares a context for traversal `index` of a job (RNG stream, buffers) and creates its task.
Task<void> start_traversal(const TraversalJob& job, TraversalContext& ctx, int index, QueryPort* port, int slot, int worker = 0);

/// The bookkeeping every scheduler repeats, for one thread's fixed set of slots: a slot holds a
/// live traversal (its context, taken from the delivery's pool, and its task). start() begins
/// traversal `index` in a slot; after resuming a slot's traversal, finish_if_done() rethrows its
/// failure or delivers it in index order and counts it; abandon() destroys every live traversal
/// (frames first: they live in the contexts' arenas) and returns the contexts. A scheduler then
/// only decides when to resume what and when to evaluate.
class TraversalSlots {
 public:
  TraversalSlots(const TraversalJob& job, OrderedDelivery& delivery, ContextPool& pool, int slots, QueryPort* port,
                 int worker = 0)
      : job_(job), delivery_(delivery), pool_(pool), port_(port), worker_(worker), slots_(static_cast<std::size_t>(slots)) {
    validate_job(job);
  }
  ~TraversalSlots() { abandon(); }
  TraversalSlots(const TraversalSlots&) = delete;
  TraversalSlots& operator=(const TraversalSlots&) = delete;

  int size() const noexcept { return static_cast<int>(slots_.size()); }
  int live() const noexcept { return live_; }
  /// Starts traversal `index` of the job in `slot` (free); returns the handle to resume first.
  std::coroutine_handle<> start(int slot, int index) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    s.ctx = delivery_.acquire();
    s.task = start_traversal(job_, *s.ctx, index, port_, slot, worker_);
    ++live_;
    return s.task.handle();
  }
  /// If the traversal in `slot` has finished: rethrows what it threw, or delivers it (adding its
  /// nodes, one traversal and whether it was cut off to `stats`) and frees the slot; returns
  /// whether it finished.
  bool finish_if_done(int slot, RunStats& stats) {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (!s.task.valid() || !s.task.done()) return false;
    s.task.rethrow_if_failed();
    s.task.destroy();
    stats.nodes += s.ctx->nodes;
    ++stats.traversals;
    stats.cutoffs += s.ctx->cut_off ? 1 : 0;
    --live_;
    delivery_.finished(std::move(s.ctx));
    return true;
  }
  void abandon() {
    for (Slot& s : slots_) {
      s.task.destroy();
      pool_.release(std::move(s.ctx));
    }
    live_ = 0;
  }

 private:
  struct Slot {
    std::unique_ptr<TraversalContext> ctx;
    Task<void> task;
  };
  const TraversalJob& job_;
  OrderedDelivery& delivery_;
  ContextPool& pool_;
  QueryPort* port_;
  int worker_;
  std::vector<Slot> slots_;
  int live_ = 0;
};

// --- registry -------------------------------------------------------------------------------
/// Builds a scheduler from its options, resolved (every declared option present, in range).
using SchedulerFactory = std::function<std::unique_ptr<Scheduler>(const SchedulerOptions&)>;

/// Registers a scheduler under `name` with the options it reads (replacing one of the same name).
void register_scheduler(const std::string& name, const std::string& description, std::vector<SchedulerOption> options,
                        SchedulerFactory factory);
/// Registers recursive, interleaved, pooled and the example `waves`. Idempotent.
void register_builtin_schedulers();
std::vector<std::string> scheduler_names();
std::string scheduler_description(const std::string& name);
/// The options `name` declares (empty for an unknown name).
std::vector<SchedulerOption> scheduler_options(const std::string& name);
/// Throws InputError naming the valid schedulers for an unknown name, the scheduler's options
/// for an option it does not declare, and the range for a value outside it.
std::unique_ptr<Scheduler> make_scheduler(const std::string& name, const SchedulerOptions& options = {});

}  // namespace cfr
