#pragma once
// The MMD self-play trainer (docs/mmd.md): per iteration, self-play rollouts as coroutines
// (engine/traversal/mmd.h) batched by the configured scheduler, whose samples stream through a
// SamplePipe into this iteration's policy and value memories while the rollouts run; then the
// policy (clipped policy gradient + KL toward the magnet + the fading KL toward a bot) and the value
// network train on the trainer threads, the new weights are published, the magnet moves every
// magnet_every iterations and a snapshot of the policy joins the opponents every snapshot_every.
// Evaluation, metrics.jsonl, numeric faults, checkpoints and resume are the shared ones
// (the run context apps/algorithms/context.h, the driver apps/train/driver.cc).
//
// Under mpirun (apps/run/distributed.h) rank 0 is the learner (memories, training, evaluation,
// checkpoints, the league's statistics and snapshots) and every other rank plays a fixed share of
// each iteration's rollouts with the weights the learner sends (π, V, the magnet, the snapshot
// opponent; the league's networks each rank loads from mmd.opponents): same seed, same samples
// as one process.
#include <memory>

#include "apps/algorithms/mmd/options.h"
#include "apps/algorithms/trainer.h"

namespace cfr {

/// MMD on the registered game setup.run.shape.game, its options mmd_options(setup.config), its
/// traversal adapter made from setup.game (Lost Cities: opponent_bot is mmd.bot when a bot takes
/// part).
std::unique_ptr<Trainer> make_mmd_trainer(const TrainerSetup& setup);

}  // namespace cfr
