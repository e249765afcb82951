#pragma once
// The Deep CFR trainer (deep-cfr.md §1), as a library: per iteration, for each player a traversal
// phase whose samples stream through a SamplePipe into the reservoir memories (the consumer
// thread inserts while traversals run), then the networks train on the memories and the new
// weights are published; evaluation, metrics.jsonl, the checkpoint and the log line follow (the
// run context's, apps/algorithms/context.h, with Deep CFR's own diagnostics). The
// steps are the trainer's own methods; a single process, the learner of a distributed run and its
// traversal ranks all go through them (apps/run/distributed.h carries the messages).
//
// ESCHER (DeepCfrOptions::escher, docs/escher.md) runs on the same iteration: its value step
// (value trajectories, the value memory and network) comes first, its regret traversals
// (engine/traversal/escher.h) replace Deep CFR's, and everything else is shared. With
// keep_snapshots every iteration's advantage nets are also kept (apps/run/snapshots.h).
//
// The driver (apps/train/driver.cc) prepares the run directory and decides what a resume continues
// from; the factories below are the registrations' (deep_cfr/algorithm.cc, escher/algorithm.cc).
#include <memory>

#include "apps/algorithms/deep_cfr/options.h"
#include "apps/algorithms/trainer.h"

namespace cfr {

/// Deep CFR on the registered game setup.run.shape.game (engine/games/games.h), its options
/// deep_cfr_options(setup.config). Only a learner allocates the memories.
std::unique_ptr<Trainer> make_deep_cfr_trainer(const TrainerSetup& setup);
/// ESCHER: the same trainer with escher_options(setup.config).
std::unique_ptr<Trainer> make_escher_trainer(const TrainerSetup& setup);

}  // namespace cfr
