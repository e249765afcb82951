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

struct Slot {
  std::unique_ptr<TraversalContext> ctx;
  Task<void> task;
};

}  // namespace

RunStats InterleavedScheduler::run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
                                   const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const int window = std::max(1, cfg_.window);
  Batcher batcher(nets, cfg_.max_batch, window);
  LoopPort port(batcher);
  OrderedDelivery delivery(sink, pool_);
  FlushPolicy policy;
  std::vector<Slot> slots(static_cast<std::size_t>(window));
  std::vector<std::pair<int, std::coroutine_handle<>>> ready, running;
  ready.reserve(static_cast<std::size_t>(window));
  running.reserve(static_cast<std::size_t>(window));
  RunStats stats;
  int next = 0, live = 0;

  auto start = [&](int slot) {
    if (next >= job.num_traversals) return;
    Slot& s = slots[static_cast<std::size_t>(slot)];
    s.ctx = delivery.acquire();
    s.task = start_traversal(job, *s.ctx, next++, &port, slot);
    ready.emplace_back(slot, s.task.handle());
    ++live;
  };
  auto abandon = [&] {
    batcher.clear();
    for (Slot& s : slots) {
      s.task.destroy();  // frames first: they live in the context's arena
      pool_.release(std::move(s.ctx));
    }
  };

  try {
    for (int i = 0; i < window; ++i) start(i);
    while (live > 0) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        stats.stopped = true;
        break;
      }
      running.swap(ready);
      for (const auto& [slot, h] : running) {
        h.resume();
        Slot& s = slots[static_cast<std::size_t>(slot)];
        if (!s.task.done()) continue;
        s.task.rethrow_if_failed();
        s.task.destroy();
        stats.nodes += s.ctx->nodes;
        ++stats.traversals;
        --live;
        delivery.finished(std::move(s.ctx));
        start(slot);
      }
      running.clear();
      if (ready.empty() && batcher.pending_total() > 0) {
        const std::uint64_t nets_to_flush = policy.choose(batcher);
        for (int n = 0; n < batcher.num_nets(); ++n)
          if ((nets_to_flush >> n) & 1U) batcher.flush(n, [&](EvalRequest& r) { ready.emplace_back(r.ctx->slot, r.waiter); });
      }
    }
  } catch (...) {
    abandon();
    throw;
  }
  abandon();
  stats.batch = batcher.stats;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace cfr
