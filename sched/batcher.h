#pragma once
// Collects suspended traversals' queries per network and evaluates them in batches.
//
// add() files a request (a pointer into the suspended coroutine's frame: no allocation once the
// pending lists reached their capacity). flush(net, done) evaluates the pending requests of one
// network in chunks of at most max_batch rows, writes each output row into its request, then
// calls done(request) so the caller can resume the traversal. Not thread-safe: one owner thread
// (the pooled scheduler's inference thread, or a single-thread loop).
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/errors.h"
#include "engine/traversal/traversal_context.h"
#include "sched/evaluator.h"

namespace cfr {

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct BatchStats {
  std::int64_t requests = 0;
  std::int64_t forwards = 0;
  std::vector<std::int64_t> histogram;  // histogram[b] = forwards of batch size b
  double evaluate_seconds = 0;          // inside Evaluator::evaluate
  double wait_seconds = 0;              // summed over requests: submitted → output written

  double mean_batch() const noexcept { return forwards ? static_cast<double>(requests) / static_cast<double>(forwards) : 0.0; }
  int max_batch_seen() const noexcept;
  void merge(const BatchStats& o);
};

class Batcher {
 public:
  /// nets[i] evaluates network i of the algorithm's network set (nullptr: a network no traversal
  /// may query); 1 to kMaxNets networks. max_batch is capped by each evaluator's own maximum;
  /// `capacity` reserves the pending lists.
  Batcher(std::span<Evaluator* const> nets, int max_batch, int capacity);

  /// Networks a batcher (and a FlushPolicy's mask) can hold.
  static constexpr int kMaxNets = kMaxNetworks;
  int num_nets() const noexcept { return static_cast<int>(nets_.size()); }

  /// Files a request, stamping its submit time unless `keep_time` (already stamped upstream).
  void add(EvalRequest& r, bool keep_time = false) {
    CFR_DCHECK(r.net >= 0 && r.net < num_nets() && nets_[static_cast<std::size_t>(r.net)] != nullptr, "net {}", r.net);
    if (!keep_time) r.submit_ns = now_ns();
    pending_[static_cast<std::size_t>(r.net)].push_back(&r);
    ++total_;
  }
  int pending(int net) const noexcept { return static_cast<int>(pending_[static_cast<std::size_t>(net)].size()); }
  int pending_total() const noexcept { return total_; }
  int max_batch(int net) const noexcept { return max_batch_[static_cast<std::size_t>(net)]; }
  /// Submit time of the oldest pending request (0 if none).
  std::int64_t oldest_ns() const noexcept;

  template <class Done>
  void flush(int net, Done&& done) {
    auto& list = pending_[static_cast<std::size_t>(net)];
    std::size_t begin = 0;
    while (begin < list.size()) {
      const std::size_t n = std::min(list.size() - begin, static_cast<std::size_t>(max_batch_[static_cast<std::size_t>(net)]));
      run(net, std::span<EvalRequest* const>(list.data() + begin, n));
      for (std::size_t i = 0; i < n; ++i) done(*list[begin + i]);
      begin += n;
    }
    total_ -= static_cast<int>(list.size());
    list.clear();
  }
  template <class Done>
  void flush_all(Done&& done) {
    for (int net = 0; net < num_nets(); ++net)
      if (!pending_[static_cast<std::size_t>(net)].empty()) flush(net, done);
  }
  /// Drops every pending request (abort).
  void clear() noexcept {
    for (auto& l : pending_) l.clear();
    total_ = 0;
  }

  BatchStats stats;

 private:
  void run(int net, std::span<EvalRequest* const> reqs);

  std::vector<Evaluator*> nets_;
  std::vector<EvaluatorInfo> info_;
  std::vector<int> max_batch_;
  std::vector<std::vector<EvalRequest*>> pending_;
  int total_ = 0;
  std::vector<float> in_, out_;
  std::vector<ActionMask> legal_;
};

}  // namespace cfr
