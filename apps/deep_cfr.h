#pragma once
// cfr-run's driver of the Deep CFR trainer (apps/algorithms/deep_cfr): typed options from the
// config, the run directory (config.toml, parts/), what a resume continues from and whether it
// is exact, the game adapter, and the process's role in a distributed run.
#include <atomic>
#include <string>
#include <utility>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/deep_cfr/options.h"
#include "apps/config.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

class Distributed;

struct RunOptions {
  std::string run_dir;              // created if missing
  bool resume = false;              // continue the run in run_dir from its latest checkpoint
  bool allow_training_changes = false;  // resume with other values of training keys (not the same run)
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM: finish the current step and return
  bool progress = false;            // a live progress line on stderr
  Distributed* dist = nullptr;      // an MPI job of ≥ 2 processes (apps/distributed.h), else null
};

/// The typed options of a config (the config's choices become enums here, once).
DeepCfrOptions deep_cfr_options(const Config& cfg);

/// The tests' seam for fault injection (never a config key): CFR_TEST_FAULTS =
/// "nonfinite_target_iteration=N,nonfinite_weights_iteration=M" (either or both) sets the
/// options' fault fields; anything else there is an InputError naming the variable.
inline constexpr const char* kTestFaultsVariable = "CFR_TEST_FAULTS";
void apply_test_faults(DeepCfrOptions& options, const char* spec);
/// The game settings of a config (what the registered game's traversal adapter is made from).
GameSettings game_settings(const Config& cfg);
/// Input width of the configured game's encoding and its number of actions.
std::pair<int, int> game_widths(const Config& cfg);

/// Runs the whole training (or resumes it) in this process's role; returns the last completed
/// iteration (a traversal rank: the iterations it served).
int run_deep_cfr(Config& cfg, const RunOptions& opts);

}  // namespace cfr
