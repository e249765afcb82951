#pragma once
// `pooled`: `threads` coroutine threads each keep window/threads traversals alive and run them
// until all are suspended; they then hand their queries, in one go, to a dedicated inference
// thread that owns the evaluators (the device). The inference thread evaluates when a batch is
// full (max_batch requests), when every coroutine thread is waiting (no progress is possible
// otherwise), or when the oldest request has waited deadline_us (if > 0); then it routes each
// output back to the thread that owns the traversal. No thread blocks per request: the inference
// server done right.
#include "sched/scheduler.h"

namespace cfr {

class PooledScheduler final : public Scheduler {
 public:
  explicit PooledScheduler(const SchedulerConfig& c) : cfg_(c) {}
  std::string_view name() const noexcept override { return "pooled"; }
  RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
               const std::atomic<bool>* stop) override;

 private:
  SchedulerConfig cfg_;
  ContextPool pool_;
};

}  // namespace cfr
