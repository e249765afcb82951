#pragma once
// The training algorithms cfr-run offers ([algorithm] name): each one's library lives in
// apps/algorithms/<name>/ and declares its network set here, where the tools that read
// checkpoints (cfr-eval, cfr-arena, cfr-ladder, cfr-exploit's inputs) find it. LibTorch-free.
#include <array>
#include <string>
#include <string_view>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/escher/networks.h"
#include "apps/algorithms/mmd/networks.h"
#include "engine/core/errors.h"

namespace cfr {

enum class Algorithm { kDeepCfr, kEscher, kMmd };

inline constexpr std::array<std::string_view, 3> kAlgorithmNames = {"deep_cfr", "escher", "mmd"};

/// The algorithm called `name` (one of kAlgorithmNames); InputError otherwise.
inline Algorithm algorithm_from_name(std::string_view name) {
  if (name == "deep_cfr") return Algorithm::kDeepCfr;
  if (name == "escher") return Algorithm::kEscher;
  if (name == "mmd") return Algorithm::kMmd;
  throw InputError("algorithm.name = '" + std::string(name) + "': not one of deep_cfr, escher, mmd");
}

/// The network set algorithm `a` trains on a game of input width W and A actions.
inline NetworkSpecs algorithm_networks(Algorithm a, int W, int A) {
  return a == Algorithm::kEscher ? escher_networks(W, A) : a == Algorithm::kMmd ? mmd_networks(W, A) : deep_cfr_networks(W, A);
}

/// The network of algorithm `a`'s set that plays (logits over the actions, softmax = the policy):
/// Deep CFR's and ESCHER's average-strategy network, MMD's policy.
inline int playing_network(Algorithm a) { return a == Algorithm::kMmd ? static_cast<int>(kPolicyNet) : static_cast<int>(kStrategyNet); }

}  // namespace cfr
