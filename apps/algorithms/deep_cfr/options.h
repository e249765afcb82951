#pragma once
// Deep CFR's own typed options (its keys live in [traversal], [optimization]'s advantage_* and
// strategy_*, [memory], [regret_matching], [training_weighting], checkpoint.keep_snapshots and its
// own section [deep_cfr]),
// built once from a config by deep_cfr_options (algorithm.cc). The run's shared options are
// RunOptions (apps/run/options.h). ESCHER runs on this trainer with its own step:
// `escher` holds its options (apps/algorithms/deep_cfr/escher_options.h), absent for Deep CFR.
#include <cstdint>
#include <optional>

#include "apps/algorithms/deep_cfr/escher_options.h"
#include "apps/run/algorithm_registry.h"
#include "engine/traversal/traversal.h"
#include "nets/networks.h"

namespace cfr {

struct Config;

enum class UpdateOrder {
  kSimultaneous,  // both players' phases use the nets of the iteration's start (the reference)
  kAlternating,   // advantage net 0 trains and is published before player 1's phase (Algorithm 1)
};

struct DeepCfrOptions {
  // Traversals.
  int traversals_per_player = 280;
  TraversalOptions traversal;
  UpdateOrder update_order = UpdateOrder::kSimultaneous;
  int parallel_shares = 1;
  // Training.
  TrainConfig advantage_training;
  TrainConfig strategy_training;
  bool reinitialize_advantage = false;
  bool linear_weighting = true;  // samples weighted by t / T (LCFR), else uniformly
  // Memories.
  std::int64_t advantage_capacity = 2'000'000;
  std::int64_t strategy_capacity = 2'000'000;
  bool merge_duplicates = false;
  bool keep_snapshots = false;  // run_dir/snapshots (apps/run/snapshots.h)
  /// deep_cfr.overlap: iteration t + 1's traversals run while iteration t's networks train,
  /// against the networks published after iteration t − 1 (one process; docs/deep-cfr.md "Overlap").
  bool overlap = false;
  /// ESCHER (engine/traversal/escher.h): a value phase and the value network's training first,
  /// then the regret phases with ESCHER's traversals. Absent: Deep CFR.
  std::optional<EscherRunOptions> escher;
};

/// Deep CFR's options of a config (no ESCHER step).
DeepCfrOptions deep_cfr_options(const Config& c);
/// Deep CFR's memories when full on a game of input width W and A actions (two advantage
/// memories and the strategy memory), with ESCHER's value memory of `value_capacity` samples
/// (0: none).
MemoryNeed deep_cfr_memory(const Config& c, int W, int A, std::int64_t value_capacity);

}  // namespace cfr
