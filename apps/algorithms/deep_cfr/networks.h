#pragma once
// Deep CFR's network set (deep-cfr.md §1, §3), in the NetId order its traversals query
// (engine/traversal/traversal.h): an advantage network per player (masked MSE on regrets) and the strategy
// network (soft-label cross-entropy), all mapping the game's encoding to its actions.
// Header-only and LibTorch-free: the checkpoint format, its fuzzer and the tools read it too.
#include <cstdint>

#include "apps/run/streams.h"
#include "engine/traversal/traversal.h"
#include "nets/network_spec.h"

namespace cfr {

inline NetworkSpecs deep_cfr_networks(int input_width, int output_width) {
  NetworkSpecs set(kNumNets);
  set[kAdvantageNet0] = {
      .name = "advantage0", .input_width = input_width, .output_width = output_width, .loss = NetLoss::kMaskedMse};
  set[kAdvantageNet1] = {
      .name = "advantage1", .input_width = input_width, .output_width = output_width, .loss = NetLoss::kMaskedMse};
  set[kStrategyNet] = {
      .name = "strategy", .input_width = input_width, .output_width = output_width, .loss = NetLoss::kSoftCrossEntropy};
  return set;
}

}  // namespace cfr
