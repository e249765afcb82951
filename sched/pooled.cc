#include "sched/pooled.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <tuple>

namespace cfr {

namespace {

struct Worker;

struct Shared {
  std::mutex m;
  std::condition_variable server_cv;
  std::vector<std::vector<EvalRequest*>> incoming;  // per network; guarded by m
  int incoming_total = 0;
  std::int64_t oldest_ns = 0;
  int finished = 0, workers = 0;
  bool abort = false;
  bool stopped = false;
  std::exception_ptr error;
  std::atomic<int> next{0};

  void fail(std::exception_ptr e) {  // caller holds m
    if (!error) error = std::move(e);
    abort = true;
  }
};

struct Worker final : QueryPort {
  int id = 0;
  std::unique_ptr<TraversalSlots> slots;  // destroyed only once every thread has stopped
  std::vector<std::pair<int, std::coroutine_handle<>>> ready, running, inbox;  // inbox guarded by Shared::m
  std::vector<EvalRequest*> local;
  std::condition_variable cv;
  bool waiting = false;  // guarded by Shared::m: blocked until its inbox fills
  bool done = false;     // guarded by Shared::m
  std::int64_t nodes = 0, traversals = 0;

  void submit(EvalRequest& r) override {
    r.submit_ns = now_ns();
    local.push_back(&r);
  }
};

void worker_loop(Worker& w, Shared& sh, const TraversalJob& job, const std::atomic<bool>* stop, std::vector<std::unique_ptr<Worker>>& all) {
  auto start = [&](int slot) {
    const int index = sh.next.fetch_add(1);
    if (index < job.num_traversals) w.ready.emplace_back(slot, w.slots->start(slot, index));
  };
  try {
    for (int i = 0; i < w.slots->size(); ++i) start(i);
    for (;;) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        std::lock_guard lock(sh.m);
        sh.abort = true;
        sh.stopped = true;
        for (auto& o : all) o->cv.notify_all();
        break;
      }
      w.running.swap(w.ready);
      for (const auto& [slot, h] : w.running) {
        h.resume();
        if (w.slots->finish_if_done(slot, w.nodes, w.traversals)) start(slot);
      }
      w.running.clear();
      if (!w.ready.empty()) continue;
      if (w.slots->live() == 0) break;
      std::unique_lock lock(sh.m);
      for (EvalRequest* r : w.local) {
        if (sh.incoming_total == 0 || r->submit_ns < sh.oldest_ns) sh.oldest_ns = r->submit_ns;
        sh.incoming[static_cast<std::size_t>(r->net)].push_back(r);
        ++sh.incoming_total;
      }
      w.local.clear();
      if (sh.abort) break;
      w.waiting = true;
      sh.server_cv.notify_one();
      w.cv.wait(lock, [&] { return !w.inbox.empty() || sh.abort; });
      w.waiting = false;
      if (sh.abort) break;
      w.ready.swap(w.inbox);
    }
  } catch (...) {
    std::lock_guard lock(sh.m);
    sh.fail(std::current_exception());
    for (auto& o : all) o->cv.notify_all();
  }
  std::lock_guard lock(sh.m);
  ++sh.finished;
  w.done = true;
  sh.server_cv.notify_one();
}

// The inference thread. It evaluates when a network's pending requests fill a batch, when no
// coroutine thread can run (each is done or waiting with an empty inbox), or when the oldest
// request is older than the deadline; in the last two cases FlushPolicy picks the network.
void server_loop(Shared& sh, Batcher& batcher, int max_batch, int deadline_us,
                 std::vector<std::unique_ptr<Worker>>& workers) {
  std::vector<std::tuple<int, int, std::coroutine_handle<>>> routed;
  std::vector<bool> touched(workers.size());
  FlushPolicy policy;
  std::unique_lock lock(sh.m);
  auto absorb = [&] {
    for (auto& list : sh.incoming) {
      for (EvalRequest* r : list) batcher.add(*r, true);
      list.clear();
    }
    sh.incoming_total = 0;
  };
  auto none_runnable = [&] {
    for (const auto& w : workers)
      if (!w->done && !(w->waiting && w->inbox.empty())) return false;
    return true;
  };
  auto full_net = [&] {
    for (int n = 0; n < batcher.num_nets(); ++n)
      if (batcher.pending(n) + static_cast<int>(sh.incoming[static_cast<std::size_t>(n)].size()) >= max_batch) return true;
    return false;
  };
  for (;;) {
    auto ready = [&] {
      const int pending = sh.incoming_total + batcher.pending_total();
      return sh.abort || sh.finished == sh.workers || (pending > 0 && (full_net() || none_runnable()));
    };
    while (!ready()) {
      const int pending = sh.incoming_total + batcher.pending_total();
      if (deadline_us <= 0 || pending == 0) {
        sh.server_cv.wait(lock);
        continue;
      }
      std::int64_t oldest = batcher.oldest_ns();
      if (sh.incoming_total > 0 && (oldest == 0 || sh.oldest_ns < oldest)) oldest = sh.oldest_ns;
      const auto due = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(oldest)) +
                       std::chrono::microseconds(deadline_us);
      if (sh.server_cv.wait_until(lock, due) == std::cv_status::timeout) break;
    }
    if (sh.abort) return;
    absorb();
    if (batcher.pending_total() == 0) {
      if (sh.finished == sh.workers) return;
      continue;
    }
    std::uint64_t nets = 0;
    for (int n = 0; n < batcher.num_nets(); ++n)
      if (batcher.pending(n) >= max_batch) nets |= std::uint64_t{1} << n;
    if (nets == 0) nets = policy.choose(batcher);
    lock.unlock();
    routed.clear();
    try {
      for (int n = 0; n < batcher.num_nets(); ++n)
        if ((nets >> n) & 1U)
          batcher.flush(n, [&](EvalRequest& r) { routed.emplace_back(r.ctx->worker, r.ctx->slot, r.waiter); });
    } catch (...) {
      lock.lock();
      batcher.clear();
      sh.fail(std::current_exception());
      for (auto& w : workers) w->cv.notify_all();
      return;
    }
    lock.lock();
    std::fill(touched.begin(), touched.end(), false);
    for (const auto& [w, slot, h] : routed) {
      workers[static_cast<std::size_t>(w)]->inbox.emplace_back(slot, h);
      touched[static_cast<std::size_t>(w)] = true;
    }
    for (std::size_t w = 0; w < workers.size(); ++w)
      if (touched[w]) workers[w]->cv.notify_one();
  }
}

}  // namespace

RunStats PooledScheduler::run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
                              const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const int T = std::max(1, cfg_.threads);
  const int per_thread = std::max(1, (cfg_.window + T - 1) / T);
  Batcher batcher(nets, cfg_.max_batch, per_thread * T);
  OrderedDelivery delivery(sink, pool_);
  Shared sh;
  sh.workers = T;
  sh.incoming.resize(nets.size());
  for (auto& l : sh.incoming) l.reserve(static_cast<std::size_t>(per_thread * T));
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < T; ++i) {
    auto w = std::make_unique<Worker>();
    w->id = i;
    w->slots = std::make_unique<TraversalSlots>(job, delivery, pool_, per_thread, w.get(), i);
    w->ready.reserve(static_cast<std::size_t>(per_thread));
    w->running.reserve(static_cast<std::size_t>(per_thread));
    w->inbox.reserve(static_cast<std::size_t>(per_thread));
    w->local.reserve(static_cast<std::size_t>(per_thread));
    workers.push_back(std::move(w));
  }
  std::thread server([&] { server_loop(sh, batcher, cfg_.max_batch, cfg_.deadline_us, workers); });
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&, wp = w.get()] { worker_loop(*wp, sh, job, stop, workers); });
  for (auto& t : threads) t.join();
  {
    std::lock_guard lock(sh.m);
    sh.abort = sh.abort || sh.finished == sh.workers;
    sh.server_cv.notify_one();
  }
  server.join();
  // Every thread has stopped: nothing references a frame any more.
  RunStats stats;
  for (auto& w : workers) {
    w->slots->abandon();
    stats.nodes += w->nodes;
    stats.traversals += w->traversals;
  }
  if (sh.error) std::rethrow_exception(sh.error);
  stats.stopped = sh.stopped;
  stats.batch = batcher.stats;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace cfr
