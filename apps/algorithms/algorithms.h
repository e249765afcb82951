#pragma once
// The training algorithms cfr-run offers ([algorithm] name): each one's library lives in
// apps/algorithms/<name>/ and declares its network set here, where the tools that read
// checkpoints (cfr-eval, cfr-arena, cfr-ladder, cfr-exploit's inputs) find it. LibTorch-free.
#include <array>
#include <string>
#include <string_view>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/escher/networks.h"
#include "engine/core/errors.h"

namespace cfr {

enum class Algorithm { kDeepCfr, kEscher };

inline constexpr std::array<std::string_view, 2> kAlgorithmNames = {"deep_cfr", "escher"};

/// The algorithm called `name` (one of kAlgorithmNames); InputError otherwise.
inline Algorithm algorithm_from_name(std::string_view name) {
  if (name == "deep_cfr") return Algorithm::kDeepCfr;
  if (name == "escher") return Algorithm::kEscher;
  throw InputError("algorithm.name = '" + std::string(name) + "': not one of deep_cfr, escher");
}

/// The network set algorithm `a` trains on a game of input width W and A actions.
inline NetworkSpecs algorithm_networks(Algorithm a, int W, int A) {
  return a == Algorithm::kEscher ? escher_networks(W, A) : deep_cfr_networks(W, A);
}

}  // namespace cfr
