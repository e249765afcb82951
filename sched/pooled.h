#pragma once
// `pooled`: `threads` coroutine threads each keep window/threads traversals alive and run them
// until all are suspended; they then hand their queries, in one go, to a dedicated inference
// thread that owns the evaluators (the device). The inference thread evaluates when a batch is
// full (max_batch requests), when every coroutine thread is waiting (no progress is possible
// otherwise), or when the oldest request has waited deadline_us (if > 0); then it routes each
// output back to the thread that owns the traversal. No thread blocks per request: the inference
// server done right.
//
// Each thread runs a Boost.Asio io_context: the hand-offs in both directions are posts, the
// deadline is a steady_timer on the inference thread's context, and the inference thread's state
// (batcher, which thread waits, what it is owed) is touched by that thread alone, without locks.
#include "sched/scheduler.h"

namespace cfr {

inline constexpr int kMaxPooledThreads = 1024;
inline constexpr int kMaxPooledDeadlineUs = 10'000'000;

struct PooledOptions {
  int threads = 1;      // coroutine threads
  int window = 64;      // live traversals, all threads together
  int max_batch = 128;  // rows per forward; a network with this many pending requests is evaluated
  int deadline_us = 0;  // evaluate once the oldest request waited this long (0 = never)
};

class PooledScheduler final : public Scheduler {
 public:
  explicit PooledScheduler(const PooledOptions& o) : options_(o) {}
  std::string_view name() const noexcept override { return "pooled"; }
  RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
               const std::atomic<bool>* stop) override;

 private:
  PooledOptions options_;
  ContextPool pool_;
};

}  // namespace cfr
