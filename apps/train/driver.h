#pragma once
// cfr-run's driver of a training algorithm (apps/run/algorithm_registry.h: the one that
// [algorithm] name selects): the shared typed options from the config, the memory check, the run
// directory (config.toml, parts/), what a resume continues from and whether it is exact, the
// game adapter's settings, and the process's role in a distributed run.
#include <atomic>
#include <string>
#include <utility>

#include "apps/run/config.h"
#include "apps/run/options.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

class Distributed;

struct DriverOptions {
  std::string run_dir;                      // created if missing
  bool resume = false;                      // continue the run in run_dir from its latest checkpoint
  bool allow_training_changes = false;      // resume with other values of training keys (not the same run)
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM: finish the current step and return
  bool progress = false;                    // a live progress line on stderr
  Distributed* dist = nullptr;              // an MPI job of ≥ 2 processes (apps/run/distributed.h), else null
};

/// The tests' seam for fault injection (never a config key): CFR_TEST_FAULTS =
/// "nonfinite_target_iteration=N,nonfinite_weights_iteration=M" (either or both) sets the
/// options' fault fields; anything else there is an InputError naming the variable.
inline constexpr const char* kTestFaultsVariable = "CFR_TEST_FAULTS";
void apply_test_faults(RunOptions& options, const char* spec);
/// Refuses, before anything is written, memories of the selected algorithm (AlgorithmInfo::memory)
/// that cannot fit in the memory this process may use (physical RAM, or a smaller cgroup limit)
/// when full. `where` names the config.
void check_memories_fit(const Config& cfg, int input_width, int num_actions, const std::string& where);

/// Runs the whole training (or resumes it) of the algorithm algorithm.name in this process's
/// role; returns the last completed iteration (a traversal rank: the iterations it served). The
/// algorithm's trainer factory must be registered (register_builtin_trainers, or a test's own).
int run_training(Config& cfg, const DriverOptions& opts);

}  // namespace cfr
