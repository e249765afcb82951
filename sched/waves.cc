// `waves` — the in-tree example scheduler (sched/README.md walks through it). It runs the phase
// in waves of `window` traversals, as the reference's interleaved scheduler did: start a wave,
// resume runnable traversals until all are suspended, evaluate every pending query, repeat until
// the wave is done, then start the next wave. Batches shrink as a wave drains (the reference
// measured a mean of 35 for waves of 64), which is why `interleaved` refills slots instead.
// What is left of a scheduler once TraversalSlots keeps the traversals (start, deliver in order,
// rethrow, destroy every frame on the way out): when to resume which traversal, and when to
// evaluate through a Batcher.
#include <chrono>

#include "sched/scheduler.h"

namespace cfr {

namespace {

class WavesScheduler final : public Scheduler {
 public:
  explicit WavesScheduler(const SchedulerOptions& o) : window_(o.get("window")), max_batch_(o.get("max_batch")) {}
  std::string_view name() const noexcept override { return "waves"; }

  RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
               const std::atomic<bool>* stop) override {
    const auto t0 = std::chrono::steady_clock::now();
    const int window = window_;
    Batcher batcher(nets, max_batch_, window);
    struct Port final : QueryPort {
      Batcher* b;
      void submit(EvalRequest& r) override { b->add(r); }
    } port;
    port.b = &batcher;
    OrderedDelivery delivery(sink, pool_);
    TraversalSlots slots(job, delivery, pool_, window, &port);
    std::vector<std::coroutine_handle<>> ready, running;
    RunStats stats;
    for (int first = 0; first < job.num_traversals && !stats.stopped; first += window) {
      const int n = std::min(window, job.num_traversals - first);
      for (int i = 0; i < n; ++i) ready.push_back(slots.start(i, first + i));
      while (slots.live() > 0) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
          stats.stopped = true;
          break;
        }
        running.swap(ready);
        for (auto h : running) h.resume();
        running.clear();
        for (int i = 0; i < n; ++i) slots.finish_if_done(i, stats);
        batcher.flush_all([&](EvalRequest& r) { ready.push_back(r.waiter); });
      }
    }
    batcher.clear();  // after a stop: requests of abandoned traversals (their frames go with `slots`)
    stats.batch = batcher.stats;
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stats;
  }

 private:
  int window_;
  int max_batch_;
  ContextPool pool_;
};

}  // namespace

void register_waves_scheduler() {
  register_scheduler("waves", "example plug-in: waves of `window` traversals, flushed when all are suspended",
                     {{.name = "window", .default_value = 64, .min = 1, .help = "traversals per wave"},
                      {.name = "max_batch", .default_value = 128, .min = 1, .help = "rows per forward"}},
                     [](const SchedulerOptions& o) { return std::make_unique<WavesScheduler>(o); });
}

}  // namespace cfr
