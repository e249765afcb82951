#pragma once
// A scheduler written in the tests, registered as "test_one_at_a_time" so that the whole contract
// suite (tests/sched/contract_test.cc) runs on a scheduler that is not the engine's: it keeps one
// traversal live at a time and evaluates each query alone, the simplest correct scheduler.
#include <chrono>
#include <memory>

#include "sched/scheduler.h"

namespace cfr::testing {

class OneAtATimeScheduler final : public Scheduler {
 public:
  explicit OneAtATimeScheduler(const SchedulerOptions& o) : max_batch_(o.get("max_batch")) {}
  std::string_view name() const noexcept override { return "test_one_at_a_time"; }

  RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
               const std::atomic<bool>* stop) override {
    const auto t0 = std::chrono::steady_clock::now();
    Batcher batcher(nets, max_batch_, 1);
    struct Port final : QueryPort {
      Batcher* b = nullptr;
      void submit(EvalRequest& r) override { b->add(r); }
    } port;
    port.b = &batcher;
    OrderedDelivery delivery(sink, pool_);
    TraversalSlots slots(job, delivery, pool_, 1, &port);
    RunStats stats;
    for (int i = 0; i < job.num_traversals; ++i) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        stats.stopped = true;
        break;
      }
      std::coroutine_handle<> next = slots.start(0, i);
      while (next) {
        next.resume();
        next = nullptr;
        batcher.flush_all([&](EvalRequest& r) { next = r.waiter; });
      }
      slots.finish_if_done(0, stats);
    }
    stats.batch = batcher.stats;
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stats;
  }

 private:
  int max_batch_;
  ContextPool pool_;
};

inline void register_test_scheduler() {
  register_scheduler("test_one_at_a_time", "tests: one live traversal, each query evaluated alone",
                     {{.name = "max_batch", .default_value = 1, .min = 1, .help = "rows per forward (one query each)"}},
                     [](const SchedulerOptions& o) { return std::make_unique<OneAtATimeScheduler>(o); });
}

}  // namespace cfr::testing
