#include "sched/batcher.h"

#include <algorithm>
#include <cstring>

namespace cfr {

int BatchStats::max_batch_seen() const noexcept {
  for (std::size_t b = histogram.size(); b > 0; --b)
    if (histogram[b - 1] != 0) return static_cast<int>(b - 1);
  return 0;
}

void BatchStats::merge(const BatchStats& o) {
  requests += o.requests;
  forwards += o.forwards;
  if (histogram.size() < o.histogram.size()) histogram.resize(o.histogram.size(), 0);
  for (std::size_t i = 0; i < o.histogram.size(); ++i) histogram[i] += o.histogram[i];
  evaluate_seconds += o.evaluate_seconds;
  wait_seconds += o.wait_seconds;
}

Batcher::Batcher(std::span<Evaluator* const> nets, int max_batch, int capacity) {
  CFR_CHECK(!nets.empty() && nets.size() <= static_cast<std::size_t>(kMaxNets), "{} evaluators (1 to {} networks)", nets.size(),
            kMaxNets);
  CFR_CHECK(max_batch >= 1, "max_batch {}", max_batch);
  nets_.assign(nets.size(), nullptr);
  info_.assign(nets.size(), EvaluatorInfo{});
  max_batch_.assign(nets.size(), 0);
  pending_.resize(nets.size());
  std::size_t in_max = 0, out_max = 0;
  int biggest = 1;
  for (int i = 0; i < num_nets(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    nets_[k] = nets[k];
    pending_[k].reserve(static_cast<std::size_t>(std::max(capacity, 1)));
    if (nets_[k] == nullptr) continue;
    info_[k] = nets_[k]->info();
    max_batch_[k] = std::max(1, std::min(max_batch, info_[k].max_batch));
    biggest = std::max(biggest, max_batch_[k]);
    in_max = std::max(in_max, static_cast<std::size_t>(max_batch_[k]) * static_cast<std::size_t>(info_[k].input_width));
    out_max = std::max(out_max, static_cast<std::size_t>(max_batch_[k]) * static_cast<std::size_t>(info_[k].output_width));
  }
  in_.resize(in_max);
  out_.resize(out_max);
  legal_.resize(static_cast<std::size_t>(biggest));
  stats.histogram.assign(static_cast<std::size_t>(biggest) + 1, 0);
}

std::int64_t Batcher::oldest_ns() const noexcept {
  std::int64_t t = 0;
  for (const auto& l : pending_)
    for (const EvalRequest* r : l)
      if (t == 0 || r->submit_ns < t) t = r->submit_ns;
  return t;
}

void Batcher::run(int net, std::span<EvalRequest* const> reqs) {
  const auto k = static_cast<std::size_t>(net);
  const auto W = static_cast<std::size_t>(info_[k].input_width);
  const auto O = static_cast<std::size_t>(info_[k].output_width);
  const std::size_t n = reqs.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(in_.data() + i * W, reqs[i]->input, W * sizeof(float));
    legal_[i] = reqs[i]->legal;
  }
  const std::int64_t t0 = now_ns();
  nets_[k]->evaluate(std::span<const float>(in_.data(), n * W), std::span<const ActionMask>(legal_.data(), n),
                     std::span<float>(out_.data(), n * O));
  const std::int64_t t1 = now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(reqs[i]->output, out_.data() + i * O, O * sizeof(float));
    stats.wait_seconds += static_cast<double>(t1 - reqs[i]->submit_ns) * 1e-9;
  }
  stats.evaluate_seconds += static_cast<double>(t1 - t0) * 1e-9;
  stats.requests += static_cast<std::int64_t>(n);
  ++stats.forwards;
  ++stats.histogram[n];
}

}  // namespace cfr
