#include "sched/pooled.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <tuple>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace cfr {

namespace {

namespace asio = boost::asio;
using Resumable = std::pair<int, std::coroutine_handle<>>;  // (slot, handle)

/// A coroutine thread. Its io_context receives the inference thread's wake-ups.
struct Worker final : QueryPort {
  int id = 0;
  asio::io_context io;
  std::unique_ptr<TraversalSlots> slots;  // destroyed only once every thread has stopped
  std::vector<Resumable> ready, running;
  std::vector<EvalRequest*> local;  // this round's queries; read by the inference thread while idle
  std::vector<Resumable> mailbox;   // written by the inference thread while idle, taken on wake-up
  bool woken = false;
  RunStats counts;  // nodes, traversals and cut-offs of this thread's finished traversals

  void submit(EvalRequest& r) override {
    r.submit_ns = now_ns();
    local.push_back(&r);
  }
};

/// The inference thread: every member is touched only by handlers running on `io`'s thread,
/// except `abort`, which the coroutine threads read.
class Server {
 public:
  Server(Batcher& batcher, const PooledOptions& o, std::vector<std::unique_ptr<Worker>>& workers)
      : batcher_(batcher),
        max_batch_(o.max_batch),
        deadline_us_(o.deadline_us),
        workers_(workers),
        idle_(workers.size(), false),
        done_(workers.size(), false),
        outbox_(workers.size()) {
    // Only a deadline needs a timer: a timer brings the context's reactor (epoll), through which
    // every post from another thread would then have to wake the inference thread.
    if (deadline_us_ > 0) timer_.emplace(io);
    const std::size_t per_thread = workers.front()->ready.capacity();
    for (auto& b : outbox_) b.reserve(per_thread);
    routed_.reserve(per_thread * workers.size());
  }

  asio::io_context io;
  std::atomic<bool> abort{false};
  std::exception_ptr error;
  bool stopped = false;

  /// Worker `w` ran out of runnable traversals: it hands over its queries and waits.
  void idle(int w) {
    Worker& worker = *workers_[static_cast<std::size_t>(w)];
    idle_[static_cast<std::size_t>(w)] = true;
    if (abort) {
      worker.local.clear();
      wake(w);
      return;
    }
    for (EvalRequest* r : worker.local) batcher_.add(*r, true);
    worker.local.clear();
    if (!outbox_[static_cast<std::size_t>(w)].empty()) wake(w);
    decide();
  }

  /// Worker `w` has stopped: finished, stopped by the flag, or failed with `e`.
  void done(int w, std::exception_ptr e, bool by_stop) {
    done_[static_cast<std::size_t>(w)] = true;
    ++finished_;
    if (e) fail(std::move(e));
    if (by_stop && !abort) {
      stopped = true;
      abort_all();
    }
    decide();
  }

 private:
  void fail(std::exception_ptr e) {
    if (!error) error = std::move(e);
    abort_all();
  }
  void abort_all() {
    abort = true;
    batcher_.clear();  // requests of traversals about to be destroyed
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (idle_[w]) wake(static_cast<int>(w));
  }
  /// Hands `w` what it is owed (or nothing, on abort) and lets it run.
  void wake(int w) {
    Worker& worker = *workers_[static_cast<std::size_t>(w)];
    idle_[static_cast<std::size_t>(w)] = false;
    worker.mailbox.swap(outbox_[static_cast<std::size_t>(w)]);
    asio::post(worker.io, [&worker] { worker.woken = true; });
  }
  bool none_runnable() const {
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (!done_[w] && !idle_[w]) return false;  // an idle thread is owed nothing (else it was woken)
    return true;
  }
  /// Evaluates what is due now; arms the deadline for what is not.
  void decide() {
    if (finished_ == static_cast<int>(workers_.size())) {
      if (timer_) timer_->cancel();
      io.stop();
      return;
    }
    while (!abort && batcher_.pending_total() > 0) {
      std::uint64_t nets = 0;
      for (int n = 0; n < batcher_.num_nets(); ++n)
        if (batcher_.pending(n) >= max_batch_) nets |= std::uint64_t{1} << n;
      if (nets == 0 && none_runnable()) nets = policy_.choose(batcher_);
      if (nets == 0) {
        arm_deadline();
        return;
      }
      evaluate(nets);
    }
  }
  void arm_deadline() {
    if (deadline_us_ <= 0) return;
    const std::int64_t due = batcher_.oldest_ns() + std::int64_t{deadline_us_} * 1000;
    if (armed_ && due == armed_due_) return;
    armed_ = true;
    armed_due_ = due;
    timer_->expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(due)));
    timer_->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;  // re-armed or cancelled
      armed_ = false;
      if (abort || batcher_.pending_total() == 0) return;
      evaluate(policy_.choose(batcher_));
      decide();
    });
  }
  void evaluate(std::uint64_t nets) {
    routed_.clear();
    try {
      for (int n = 0; n < batcher_.num_nets(); ++n)
        if ((nets >> n) & 1U)
          batcher_.flush(n, [&](EvalRequest& r) { routed_.emplace_back(r.ctx->worker, r.ctx->slot, r.waiter); });
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    for (const auto& [w, slot, h] : routed_) outbox_[static_cast<std::size_t>(w)].emplace_back(slot, h);
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (idle_[w] && !outbox_[w].empty()) wake(static_cast<int>(w));
  }

  Batcher& batcher_;
  int max_batch_, deadline_us_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  std::vector<bool> idle_, done_;
  std::vector<std::vector<Resumable>> outbox_;  // outputs owed to a thread that is still running
  std::vector<std::tuple<int, int, std::coroutine_handle<>>> routed_;
  FlushPolicy policy_;
  std::optional<asio::steady_timer> timer_;  // deadline_us > 0 only
  bool armed_ = false;
  std::int64_t armed_due_ = 0;
  int finished_ = 0;
};

void worker_loop(Worker& w, Server& server, const TraversalJob& job, std::atomic<int>& next, const std::atomic<bool>* stop) {
  auto start = [&](int slot) {
    const int index = next.fetch_add(1);
    if (index < job.num_traversals) w.ready.emplace_back(slot, w.slots->start(slot, index));
  };
  std::exception_ptr error;
  bool by_stop = false;
  try {
    const auto guard = asio::make_work_guard(w.io);
    for (int i = 0; i < w.slots->size(); ++i) start(i);
    for (;;) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
        by_stop = true;
        break;
      }
      w.running.swap(w.ready);
      for (const auto& [slot, h] : w.running) {
        h.resume();
        if (w.slots->finish_if_done(slot, w.counts)) start(slot);
      }
      w.running.clear();
      if (!w.ready.empty()) continue;
      if (w.slots->live() == 0 || server.abort) break;
      asio::post(server.io, [&server, id = w.id] { server.idle(id); });
      w.woken = false;
      while (!w.woken) w.io.run_one();
      if (server.abort) break;
      w.ready.swap(w.mailbox);
    }
  } catch (...) {
    error = std::current_exception();
  }
  asio::post(server.io, [&server, id = w.id, error, by_stop] { server.done(id, error, by_stop); });
}

}  // namespace

RunStats PooledScheduler::run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
                              const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const int T = std::max(1, options_.threads);
  const int per_thread = std::max(1, (options_.window + T - 1) / T);
  Batcher batcher(nets, options_.max_batch, per_thread * T);
  OrderedDelivery delivery(sink, pool_);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < T; ++i) {
    auto w = std::make_unique<Worker>();
    w->id = i;
    w->slots = std::make_unique<TraversalSlots>(job, delivery, pool_, per_thread, w.get(), i);
    for (auto* v : {&w->ready, &w->running, &w->mailbox}) v->reserve(static_cast<std::size_t>(per_thread));
    w->local.reserve(static_cast<std::size_t>(per_thread));
    workers.push_back(std::move(w));
  }
  Server server(batcher, options_, workers);
  std::atomic<int> next{0};
  {
    const auto guard = asio::make_work_guard(server.io);
    std::thread inference([&] { server.io.run(); });
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&, wp = w.get()] { worker_loop(*wp, server, job, next, stop); });
    for (auto& t : threads) t.join();
    inference.join();  // returns once every thread's done() has run
  }
  // Every thread has stopped: nothing references a frame any more.
  RunStats stats;
  for (auto& w : workers) {
    w->slots->abandon();
    stats.nodes += w->counts.nodes;
    stats.traversals += w->counts.traversals;
    stats.cutoffs += w->counts.cutoffs;
  }
  if (server.error) std::rethrow_exception(server.error);
  stats.stopped = server.stopped;
  stats.batch = batcher.stats;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace cfr
