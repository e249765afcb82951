#pragma once
// Parallel traversal shares: one phase split into contiguous shares of its traversal indices
// (share_of, as the ranks of a distributed run split it), each run by its own scheduler on its
// own thread with its own evaluators (replicas of the same published networks).
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "engine/traversal/traversal_context.h"
#include "sched/scheduler.h"
#include "sched/worker_thread.h"

namespace cfr {

/// A finished share's samples, kept until the shares before it have reached the sink (a sink
/// takes traversals in index order). Its buffers keep their capacity from phase to phase.
struct BufferedShare final : SampleSink {
  TraversalContext carrier;
  void begin(int input_width, int output_width) {
    carrier.advantage.configure(input_width, output_width);
    carrier.strategy.configure(input_width, output_width);
  }
  void consume(const TraversalContext& ctx) override {
    carrier.advantage.append(ctx.advantage);
    carrier.strategy.append(ctx.strategy);
    carrier.index = ctx.index;
  }
};

/// A traversal phase split into `evaluators.size()` contiguous shares of its traversal indices,
/// share k run by its own scheduler on its own thread with evaluators[k]. Share 0 streams into
/// the sink; the others are buffered and follow it in order, so the sink receives the samples in
/// index order as with one share. Traversal j draws from the same RNG stream whatever the count (outputs equal bit for
/// bit with network.invariant_chunk; docs/deep-cfr.md "Batch invariance").
class PhaseShares {
 public:
  using SchedulerFactory = std::function<std::unique_ptr<Scheduler>()>;
  /// The job of (iteration, player) restricted to a share.
  using JobFactory = std::function<TraversalJob(int iteration, int player, TraversalShare share)>;

  /// Share k uses evaluators[k] (share 0: `first`, the caller's scheduler); at most `traversals`
  /// shares are used.
  PhaseShares(std::vector<std::vector<Evaluator*>> evaluators, int traversals, Scheduler& first,
              const SchedulerFactory& make_scheduler, JobFactory job)
      : n_(traversals), job_(std::move(job)) {
    const int s = std::max(1, std::min(static_cast<int>(evaluators.size()), n_));
    schedulers_.push_back(&first);
    evals_.push_back(std::move(evaluators[0]));
    for (int k = 1; k < s; ++k) {
      owned_.push_back(make_scheduler());
      schedulers_.push_back(owned_.back().get());
      evals_.push_back(std::move(evaluators[static_cast<std::size_t>(k)]));
      threads_.push_back(std::make_unique<WorkerThread>());
      buffers_.push_back(std::make_unique<BufferedShare>());  // share k's is buffers_[k - 1]
    }
  }
  int count() const noexcept { return static_cast<int>(schedulers_.size()); }

  RunStats run(int it, int p, SampleSink& sink, const std::atomic<bool>* stop) {
    const int shares = count();
    std::vector<RunStats> st(static_cast<std::size_t>(shares));
    auto job = [&](int k) { return job_(it, p, share_of(n_, k, shares)); };
    for (int k = 1; k < shares; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const TraversalJob jk = job(k);
      buffers_[ku - 1]->begin(jk.input_width, jk.output_width);
      threads_[ku - 1]->submit([&, jk, ku] { st[ku] = schedulers_[ku]->run(jk, evals_[ku], *buffers_[ku - 1], stop); });
    }
    std::exception_ptr error;
    try {
      st[0] = schedulers_[0]->run(job(0), evals_[0], sink, stop);
    } catch (...) {
      error = std::current_exception();
    }
    for (int k = 1; k < shares; ++k) try {
        threads_[static_cast<std::size_t>(k - 1)]->wait();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (error) std::rethrow_exception(error);
    RunStats total = st[0];
    for (int k = 1; k < shares; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const TraversalContext& buffered = buffers_[ku - 1]->carrier;
      if (buffered.advantage.size() + buffered.strategy.size() > 0) sink.consume(buffered);
      total.nodes += st[ku].nodes;
      total.traversals += st[ku].traversals;
      total.cutoffs += st[ku].cutoffs;
      total.batch.merge(st[ku].batch);
      total.stopped = total.stopped || st[ku].stopped;
    }
    return total;
  }

 private:
  int n_;
  JobFactory job_;
  std::vector<std::unique_ptr<Scheduler>> owned_;
  std::vector<Scheduler*> schedulers_;
  std::vector<std::vector<Evaluator*>> evals_;  // per share: its replica's evaluators
  std::vector<std::unique_ptr<WorkerThread>> threads_;
  std::vector<std::unique_ptr<BufferedShare>> buffers_;
};

}  // namespace cfr
