#pragma once
// An algorithm's network set, as it declares it: how many networks, each one's input and output
// width and loss. The networks (nets/networks.h), the schedulers' batchers (one evaluator per
// entry), checkpoints (meta.json lists the set) and a distributed run's weight broadcast all size
// themselves from it. LibTorch-free.
#include <string>
#include <vector>

namespace cfr {

/// The loss a network trains with on its samples (input, target, legal mask, iteration), each
/// sample weighted by iteration / T under linear weighting (deep-cfr.md §3).
enum class NetLoss {
  kMaskedMse,         // regret or value targets: mean squared error over the legal outputs
  kSoftCrossEntropy,  // policy targets: cross-entropy of the softmax over the legal outputs
  /// MMD's policy (engine/traversal/mmd.h): a clipped policy-gradient objective, a KL pull toward
  /// the magnet policy and toward a bot's moves (TrainConfig::policy_gradient). A sample's target
  /// holds 4·A + 1 floats: the advantage at the taken action (zeros elsewhere), the behaviour
  /// policy's probability of the taken action (zeros elsewhere), the magnet's policy, the bot's
  /// move as a one-hot (zeros without one), and the value target (not this loss's).
  kClippedPolicyGradient,
};

struct NetworkSpec {
  std::string name;  // in checkpoints, metrics and messages
  int input_width = 0;
  int output_width = 0;
  NetLoss loss = NetLoss::kMaskedMse;
  /// Floats of a training sample's target (0: output_width; kClippedPolicyGradient: 4·A + 1).
  int target_width = 0;
  int sample_target_width() const noexcept { return target_width > 0 ? target_width : output_width; }
};

using NetworkSpecs = std::vector<NetworkSpec>;

}  // namespace cfr
