#pragma once
// Parallel traversal shares of one phase (traversal.parallel_shares) and the long-lived worker
// threads they and the trainer run on.
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "engine/traversal/traversal_context.h"
#include "nets/networks.h"
#include "sched/scheduler.h"

namespace cfr {

/// One long-lived thread that runs one job at a time (the trainer thread, the threads of
/// parallel traversal shares). A thread per
/// iteration would make glibc and OpenBLAS set up per-thread state again each time (the soak
/// run's resident memory crept up with it).
class WorkerThread {
 public:
  WorkerThread() : thread_([this] { loop(); }) {}
  ~WorkerThread() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(m_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  /// Waits for the submitted job; rethrows what it threw.
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || static_cast<bool>(job_); });
      if (quit_) return;
      auto job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      std::exception_ptr err;
      try {
        job();
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      error_ = err;
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool busy_ = false, quit_ = false;
  std::thread thread_;
};

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

/// A traversal phase split into `count` contiguous shares of its traversal indices (share_of,
/// as the ranks of a distributed run split it), each run by its own scheduler on its own thread
/// with its own replica of the published networks. Share 0 streams into the sink; the others are
/// buffered and follow it in order, so the sink receives the samples in index order as with one
/// share. Traversal j draws from the same RNG stream whatever the count (outputs equal bit for
/// bit with network.invariant_chunk; docs/deep-cfr.md "Batch invariance").
class PhaseShares {
 public:
  using SchedulerFactory = std::function<std::unique_ptr<Scheduler>()>;
  /// The job of (iteration, player) restricted to a share.
  using JobFactory = std::function<TraversalJob(int iteration, int player, TraversalShare share)>;

  PhaseShares(int count, int traversals, NetworkSet& nets, Scheduler& first, const SchedulerFactory& make_scheduler,
              JobFactory job)
      : n_(traversals), job_(std::move(job)) {
    const int s = std::max(1, std::min(count, n_));
    nets.set_replicas(s);
    schedulers_.push_back(&first);
    evals_.push_back(nets.evaluators(0));
    for (int k = 1; k < s; ++k) {
      owned_.push_back(make_scheduler());
      schedulers_.push_back(owned_.back().get());
      evals_.push_back(nets.evaluators(k));
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
