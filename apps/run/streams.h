#pragma once
// The RNG streams of a run, named for Deep CFR (the first algorithm) and shared by every
// algorithm: the run context's evaluation deals, the trainers' batch draws and Deep CFR's
// memories. An algorithm's own streams follow them (escher_networks.h, mmd/networks.h).
// Cut out of apps/algorithms/deep_cfr/networks.h, which includes this header.
#include <cstdint>

namespace cfr {

/// The RNG streams of a Deep CFR run besides its traversals' (derive_seed(seed, iteration,
/// player, index), TraversalContext) and its networks' initialisation (nets/): each is
/// derive_seed(run.seed, stream[, more words]).
enum DeepCfrStream : std::uint64_t {
  kAdvantageMemoryStream = 1,  // + player: the reservoir draws of advantage memory `player`
  kStrategyMemoryStream = 2,   // the strategy memory's reservoir draws
  kTrainerStream = 3,          // the trainer's batch draws (checkpointed)
  kEvaluationStream = 4,       // + iteration: the deals of that iteration's evaluation games
};

}  // namespace cfr
