#pragma once
// MMD's network set (engine/traversal/mmd.h), in the MmdNetId order its rollouts query it: the
// policy π (clipped policy gradient with KL pulls, NetLoss::kClippedPolicyGradient, samples of
// 4·A + 1 floats), the value network V (one output, masked MSE on the rollouts' λ-returns), the
// magnet ρ and the snapshot opponent (copies of π that never train). π is the network that plays:
// the checkpoint player, the ladder and the exact evaluation read it (algorithms.h,
// playing_network). LibTorch-free.
#include <cstdint>

#include "engine/traversal/mmd.h"
#include "nets/network_spec.h"

namespace cfr {

/// MMD's RNG streams besides the rollouts' (derive_seed(seed, iteration, 0, index)) and the
/// evaluation's (DeepCfrStream::kEvaluationStream): iteration t's sample memories draw from
/// derive_seed(run.seed, kMmdMemoryStream, t), the trainer's batches from derive_seed(run.seed,
/// kTrainerStream) (checkpointed), the snapshot opponent from the same trainer stream.
inline constexpr std::uint64_t kMmdMemoryStream = 7;

/// value_input_width: input_width (mmd.value_input = "info": V reads the information state of the
/// player to move), 2·input_width ("full": that and the opponent's) or 2·input_width + the game's
/// world width ("world": and the deck's order); mmd_sample_width.
inline NetworkSpecs mmd_networks(int input_width, int output_width, int value_input_width) {
  NetworkSpecs set(kNumMmdNets);
  set[kPolicyNet] = {.name = "policy",
                     .input_width = input_width,
                     .output_width = output_width,
                     .loss = NetLoss::kClippedPolicyGradient,
                     .target_width = mmd_target_width(output_width)};
  set[kMmdValueNet] = {.name = "value", .input_width = value_input_width, .output_width = 1, .loss = NetLoss::kMaskedMse};
  set[kMagnetNet] = {
      .name = "magnet", .input_width = input_width, .output_width = output_width, .loss = NetLoss::kSoftCrossEntropy};
  set[kOpponentNet] = {
      .name = "opponent", .input_width = input_width, .output_width = output_width, .loss = NetLoss::kSoftCrossEntropy};
  return set;
}

}  // namespace cfr
