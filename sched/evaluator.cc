#include "sched/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/rng.h"

namespace cfr {

std::int64_t replace_nonfinite(std::span<float> outputs) noexcept {
  std::int64_t replaced = 0;
  for (float& v : outputs)
    if (!std::isfinite(v)) {
      v = 0.0F;
      ++replaced;
    }
  return replaced;
}

void UniformEvaluator::evaluate(std::span<const float>, std::span<const ActionMask>, std::span<float> outputs) {
  std::fill(outputs.begin(), outputs.end(), 0.0F);
}

void HashEvaluator::evaluate_row(const float* input, float* output) const {
  std::uint64_t h = mix64(seed_ ^ 0x51ed270b27ab6d2fULL);
  for (int i = 0; i < info_.input_width; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, input + i, sizeof bits);
    h = mix64(h ^ (bits + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1)));
  }
  for (int j = 0; j < info_.output_width; ++j) {
    const std::uint64_t x = mix64(h + static_cast<std::uint64_t>(j) * 0xda942042e4dd58b5ULL);
    output[j] = static_cast<float>(static_cast<double>(x >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
}

void HashEvaluator::evaluate(std::span<const float> inputs, std::span<const ActionMask>, std::span<float> outputs) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = inputs.size() / static_cast<std::size_t>(info_.input_width);
  for (std::size_t r = 0; r < n; ++r)
    evaluate_row(inputs.data() + r * static_cast<std::size_t>(info_.input_width),
                 outputs.data() + r * static_cast<std::size_t>(info_.output_width));
  if (latency_us_ > 0) {
    const auto until = start + std::chrono::nanoseconds(static_cast<std::int64_t>(latency_us_ * 1e3));
    while (std::chrono::steady_clock::now() < until) {
    }
  }
}

std::string TabularEvaluator::key(const float* input) const {
  return std::string(reinterpret_cast<const char*>(input), sizeof(float) * static_cast<std::size_t>(info_.input_width));
}

void TabularEvaluator::evaluate(std::span<const float> inputs, std::span<const ActionMask>, std::span<float> outputs) {
  const std::size_t n = inputs.size() / static_cast<std::size_t>(info_.input_width);
  const auto W = static_cast<std::size_t>(info_.output_width);
  for (std::size_t r = 0; r < n; ++r) {
    const double* row = find(inputs.data() + r * static_cast<std::size_t>(info_.input_width));
    for (std::size_t j = 0; j < W; ++j) outputs[r * W + j] = row ? static_cast<float>(row[j]) : 0.0F;
  }
}

void TabularEvaluator::add(const float* input, const float* values, double weight) {
  const auto W = static_cast<std::size_t>(info_.output_width);
  const auto [it, inserted] = index_.try_emplace(key(input), rows_.size() / W);
  if (inserted) rows_.resize(rows_.size() + W, 0.0);
  double* row = rows_.data() + it->second * W;
  for (std::size_t j = 0; j < W; ++j) row[j] += weight * values[j];
}

const double* TabularEvaluator::find(const float* input) const {
  const auto it = index_.find(key(input));
  return it == index_.end() ? nullptr : rows_.data() + it->second * static_cast<std::size_t>(info_.output_width);
}

}  // namespace cfr
