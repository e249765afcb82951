#pragma once
// ESCHER's network set (engine/traversal/escher.h), in the order its traversals query it: Deep
// CFR's three (a regret network per player, masked MSE on the regrets the value network gives;
// the strategy network, soft-label cross-entropy on the opponents' sampled policies), then the
// history value network: input the history (both players' encodings, 2·W floats), output q̂(h, a)
// for player 0, trained with masked MSE on the sampled action's return. LibTorch-free.
#include "apps/algorithms/deep_cfr/networks.h"
#include "engine/traversal/escher.h"

namespace cfr {

/// ESCHER's RNG streams besides Deep CFR's (DeepCfrStream): iteration t's value memory draws from
/// derive_seed(run.seed, kValueMemoryStream, t), its value trajectory j from
/// derive_seed(derive_seed(run.seed, kValueTrajectoryStream, t), t, 0, j).
inline constexpr std::uint64_t kValueMemoryStream = 5;
inline constexpr std::uint64_t kValueTrajectoryStream = 6;

inline NetworkSpecs escher_networks(int input_width, int output_width) {
  NetworkSpecs set = deep_cfr_networks(input_width, output_width);
  set[kAdvantageNet0].name = "regret0";
  set[kAdvantageNet1].name = "regret1";
  set.push_back({.name = "value", .input_width = 2 * input_width, .output_width = output_width, .loss = NetLoss::kMaskedMse});
  return set;
}

}  // namespace cfr
