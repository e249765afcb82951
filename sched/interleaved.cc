#include "sched/interleaved.h"

#include <chrono>
#include <utility>

namespace cfr {

namespace {

class LoopPort final : public QueryPort {
 public:
  explicit LoopPort(Batcher& b) : b_(b) {}
  void submit(EvalRequest& r) override { b_.add(r); }

 private:
  Batcher& b_;
};

}  // namespace

RunStats InterleavedScheduler::run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
                                   const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const int window = std::max(1, window_);
  Batcher batcher(nets, max_batch_, window);
  LoopPort port(batcher);
  OrderedDelivery delivery(sink, pool_);
  TraversalSlots slots(job, delivery, pool_, window, &port);
  FlushPolicy policy;
  std::vector<std::pair<int, std::coroutine_handle<>>> ready, running;
  ready.reserve(static_cast<std::size_t>(window));
  running.reserve(static_cast<std::size_t>(window));
  RunStats stats;
  int next = 0;
  auto start = [&](int slot) {
    if (next < job.num_traversals) ready.emplace_back(slot, slots.start(slot, next++));
  };
  for (int i = 0; i < window; ++i) start(i);
  while (slots.live() > 0) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      stats.stopped = true;
      break;
    }
    running.swap(ready);
    for (const auto& [slot, h] : running) {
      h.resume();
      if (slots.finish_if_done(slot, stats)) start(slot);
    }
    running.clear();
    if (ready.empty() && batcher.pending_total() > 0) {
      const std::uint64_t nets_to_flush = policy.choose(batcher);
      for (int n = 0; n < batcher.num_nets(); ++n)
        if ((nets_to_flush >> n) & 1U) batcher.flush(n, [&](EvalRequest& r) { ready.emplace_back(r.ctx->slot, r.waiter); });
    }
  }
  stats.batch = batcher.stats;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace cfr
