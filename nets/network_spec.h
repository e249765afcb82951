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
  kMaskedMse,          // regret or value targets: mean squared error over the legal outputs
  kSoftCrossEntropy,   // policy targets: cross-entropy of the softmax over the legal outputs
};

struct NetworkSpec {
  std::string name;  // in checkpoints, metrics and messages
  int input_width = 0;
  int output_width = 0;
  NetLoss loss = NetLoss::kMaskedMse;
};

using NetworkSpecs = std::vector<NetworkSpec>;

}  // namespace cfr
