#pragma once
// The Deep CFR trainer (deep-cfr.md §1), as a library: per iteration, for each player a traversal
// phase whose samples stream through a SamplePipe into the reservoir memories (the consumer
// thread inserts while traversals run), then the networks train on the memories and the new
// weights are published; evaluation, metrics.jsonl, the checkpoint and the log line follow. The
// steps are the trainer's own methods; a single process, the learner of a distributed run and its
// traversal ranks all go through them (apps/distributed.h carries the messages).
//
// ESCHER (options.algorithm, docs/escher.md) runs on the same iteration: its value step
// (value trajectories, the value memory and network) comes first, its regret traversals
// (engine/traversal/escher.h) replace Deep CFR's, and everything else is shared. With
// keep_snapshots every iteration's advantage nets are also kept (apps/algorithms/snapshots.h).
//
// The driver (apps/deep_cfr.cc) builds the typed options from a config, prepares the run
// directory, decides what a resume continues from, and builds the game adapter.
#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/algorithms/deep_cfr/options.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

class Distributed;

/// Where a trainer writes and how it is driven.
struct TrainerIo {
  std::string run_dir;                      // exists (the driver created it)
  std::string config_toml;                  // the resolved config, copied into every checkpoint
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM: finish the current step and return
  bool progress = false;                    // a live progress line on stderr
  Distributed* dist = nullptr;              // an MPI job of ≥ 2 processes, else null
};

/// What cfr-run drives.
class Trainer {
 public:
  virtual ~Trainer() = default;
  /// Loads checkpoint directory `ck` (its files verified; game, network set and shape checked):
  /// networks, optimiser states, the trainer's RNG and, when saved, the memories. Returns its
  /// iteration.
  virtual int restore(const std::string& ck) = 0;
  /// The learner (or a single process): trains iterations first, first + 1, … up to
  /// max_iterations, max_minutes or a stop request, appending to the run directory's
  /// metrics.jsonl and log.txt; `note` is said after the start line and `first_metrics` merged
  /// into the first metrics line (a resume's verdict and record). Returns the last completed
  /// iteration.
  virtual int train(int first, nlohmann::json first_metrics, const std::string& note) = 0;
  /// A traversal rank of a distributed run: traverses its share of every phase the learner
  /// announces, until it says stop. Returns the iterations served.
  virtual int serve_learner() = 0;
  /// Whether a resume is exact only with the memories saved (Deep CFR's reservoirs span
  /// iterations; MMD's samples live one iteration and need none).
  virtual bool resume_needs_memories() const { return true; }
};

/// Deep CFR (or ESCHER: options.algorithm) on the registered game options.shape.game (engine/games/games.h), its traversal adapter
/// made from `settings`. Only a learner allocates the memories.
std::unique_ptr<Trainer> make_deep_cfr_trainer(const DeepCfrOptions& options, const TrainerIo& io,
                                               const GameSettings& settings);

/// Refuses, before anything is written, memories that cannot fit in the memory this process may
/// use (physical RAM, or a smaller cgroup limit) when full. `where` names the config.
void check_memories_fit(const DeepCfrOptions& options, int input_width, int output_width, const std::string& where);

}  // namespace cfr
