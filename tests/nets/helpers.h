#pragma once
// Small networks, fixed batches and evaluation helpers for the nets/ tests. Everything goes
// through the public API of nets/networks.h (no LibTorch here).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/core/rng.h"
#include "engine/memory/reservoir.h"
#include "nets/network_spec.h"
#include "nets/networks.h"

namespace cfr::nets_test {

constexpr int kIn = 6;
constexpr int kOut = 4;
constexpr int kHidden = 16;
constexpr int kLayers = 2;
// Deep CFR's set, declared here (nets/ knows no algorithm): two masked-MSE advantage networks and
// the soft-cross-entropy strategy network.
constexpr int kStrat = 2;
constexpr int kNets = 3;

inline NetworkSpecs deep_cfr_specs(int in = kIn, int out = kOut) {
  return {{.name = "advantage0", .input_width = in, .output_width = out, .loss = NetLoss::kMaskedMse},
          {.name = "advantage1", .input_width = in, .output_width = out, .loss = NetLoss::kMaskedMse},
          {.name = "strategy", .input_width = in, .output_width = out, .loss = NetLoss::kSoftCrossEntropy}};
}

inline NetworkConfig small_config(int invariant_chunk = 0, int hidden = kHidden, int layers = kLayers) {
  return {.hidden_size = hidden, .num_layers = layers, .activation = "relu", .invariant_chunk = invariant_chunk};
}

/// n rows of inputs in [−1, 1), from a seed.
inline std::vector<float> random_inputs(int n, std::uint64_t seed, int width = kIn) {
  Rng rng(seed);
  std::vector<float> x(static_cast<std::size_t>(n * width));
  for (float& v : x) v = static_cast<float>(2 * rng.uniform() - 1);
  return x;
}

/// The outputs of `ev` for the rows of `inputs` (one evaluate() call).
inline std::vector<float> evaluate(Evaluator& ev, std::span<const float> inputs) {
  const auto info = ev.info();
  const auto n = static_cast<int>(inputs.size()) / info.input_width;
  std::vector<ActionMask> legal(static_cast<std::size_t>(n), ~ActionMask{0});
  std::vector<float> out(static_cast<std::size_t>(n * info.output_width), std::nanf(""));
  ev.evaluate(inputs, legal, out);
  return out;
}

/// Bit-for-bit equality (a NaN equals itself, −0 differs from +0).
inline bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// One fixed batch, returned whole and in order by every sample() call: the loss of a training
/// step is then a function of the test's own numbers.
class FixedBatch final : public BatchSource {
 public:
  struct Row {
    std::vector<float> input, target;
    ActionMask legal;
    float weight;  // the weight column: a raw sample's iteration
  };
  explicit FixedBatch(std::vector<Row> rows) : rows_(std::move(rows)) {}
  std::int64_t rows() const noexcept override { return static_cast<std::int64_t>(rows_.size()); }
  void sample(int n, Rng&, std::span<float> inputs, std::span<float> targets, std::span<float> legal,
              std::span<float> weights) override {
    REQUIRE(n == static_cast<int>(rows_.size()));
    for (int k = 0; k < n; ++k) {
      const Row& r = rows_[static_cast<std::size_t>(k)];
      std::copy(r.input.begin(), r.input.end(), inputs.begin() + k * kIn);
      // A row's target may be wider than the output (NetLoss::kClippedPolicyGradient): its legal
      // row is as wide, as a reservoir memory's is.
      const int tw = static_cast<int>(r.target.size());
      std::copy(r.target.begin(), r.target.end(), targets.begin() + k * tw);
      for (int a = 0; a < tw; ++a) legal[static_cast<std::size_t>(k * tw + a)] = mask_has(r.legal, a) ? 1.0F : 0.0F;
      weights[static_cast<std::size_t>(k)] = r.weight;
    }
    ++draws_;
  }
  const std::vector<Row>& data() const { return rows_; }
  /// The inputs of the rows, row-major.
  std::vector<float> inputs() const {
    std::vector<float> x;
    for (const Row& r : rows_) x.insert(x.end(), r.input.begin(), r.input.end());
    return x;
  }
  int draws() const { return draws_; }

 private:
  std::vector<Row> rows_;
  int draws_ = 0;
};

/// A reservoir memory of `n` random samples: inputs and targets in [−1, 1), random non-empty
/// legal masks, iterations 1..max_iteration.
inline void fill_memory(ReservoirMemory& mem, int n, std::uint64_t seed, int max_iteration = 5, bool strategy = false) {
  Rng rng(seed);
  std::vector<float> in(kIn), target(kOut);
  for (int i = 0; i < n; ++i) {
    for (float& v : in) v = static_cast<float>(2 * rng.uniform() - 1);
    ActionMask legal = rng.below(1U << kOut);
    if (legal == 0) legal = 1;
    float sum = 0;
    for (int a = 0; a < kOut; ++a) {
      target[static_cast<std::size_t>(a)] =
          strategy ? (mask_has(legal, a) ? static_cast<float>(rng.uniform()) : 0.0F) : static_cast<float>(2 * rng.uniform() - 1);
      sum += target[static_cast<std::size_t>(a)];
    }
    if (strategy)  // a distribution over the legal actions
      for (float& v : target) v = sum > 0 ? v / sum : 0.0F;
    mem.insert(in.data(), target.data(), legal,
               1 + static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(max_iteration))));
  }
}

/// A path in the temporary directory, removed when the guard goes.
struct TempFile {
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() / fmt::format("cfr_nets_test_{}_{}", ::getpid(), name)).string()) {}
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path;
};

/// The outputs of every published network on `inputs`, concatenated.
inline std::vector<float> all_outputs(NetworkSet& nets, std::span<const float> inputs) {
  std::vector<float> out;
  for (int n = 0; n < nets.size(); ++n) {
    const auto y = evaluate(nets.evaluator(n), inputs);
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

/// The published weights of network `net` (a slice of published_weights()).
inline std::vector<float> net_weights(const NetworkSet& nets, int net) {
  const auto all = nets.published_weights();
  std::int64_t at = 0;
  for (int k = 0; k < net; ++k) at += nets.parameters(k);
  return {all.begin() + at, all.begin() + at + nets.parameters(net)};
}

}  // namespace cfr::nets_test
