#pragma once
// The typed options of a Deep CFR run: what the trainer reads, built from a config by the driver
// (apps/deep_cfr.cc, deep_cfr_options). Choices are enums here; the strings of the config are
// compared once, where they are parsed.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/algorithms/algorithms.h"
#include "apps/algorithms/mmd/options.h"
#include "apps/play_mode.h"
#include "apps/checkpoint_format.h"
#include "engine/games/lost_cities.h"
#include "engine/traversal/escher.h"
#include "engine/traversal/traversal.h"
#include "nets/networks.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr {

enum class UpdateOrder {
  kSimultaneous,  // both players' phases use the nets of the iteration's start (the reference)
  kAlternating,   // advantage net 0 trains and is published before player 1's phase (Algorithm 1)
};
enum class NonfinitePolicy { kSkip, kStop };

struct DeepCfrOptions {
  /// Deep CFR, or ESCHER on the same iteration (engine/traversal/escher.h): a value phase and
  /// the value network's training first, then the regret phases with ESCHER's traversals.
  Algorithm algorithm = Algorithm::kDeepCfr;
  // The run.
  std::uint64_t seed = 79;
  int max_iterations = 100;
  double max_minutes = 0;  // 0 = no limit
  int torch_threads = 1;
  std::string experiment_name;
  CheckpointShape shape;  // the game's name and the networks' shape, as checkpoints record them
  NetworkConfig network;
  // Traversals.
  int traversals_per_player = 280;
  TraversalOptions traversal;
  UpdateOrder update_order = UpdateOrder::kSimultaneous;
  std::string scheduler = "interleaved";  // a registered scheduler
  SchedulerOptions scheduler_options;  // the scheduler's own (sched/scheduler.h)
  int parallel_shares = 1;
  // ESCHER's own (algorithm = kEscher).
  EscherOptions escher;
  int value_traversals = 1000;
  TrainConfig value_training;
  std::int64_t value_capacity = 1'000'000;
  bool reinitialize_value = false;
  // MMD's own (algorithm = kMmd, apps/algorithms/mmd/trainer.h).
  MmdOptions mmd;
  // Training.
  TrainConfig advantage_training;
  TrainConfig strategy_training;
  int learning_rate_decay_iterations = 0;  // 0 = constant; else lr / sqrt(1 + (t - 1) / this)
  bool reinitialize_advantage = false;
  bool linear_weighting = true;  // samples weighted by t / T (LCFR), else uniformly
  NonfinitePolicy nonfinite = NonfinitePolicy::kSkip;
  // Memories.
  std::int64_t advantage_capacity = 2'000'000;
  std::int64_t strategy_capacity = 2'000'000;
  SamplePipeOptions pipe;
  bool check_ram = true;
  bool merge_duplicates = false;
  // Evaluation (Lost Cities: matches against bots under `rules`; enumerable games: exact).
  int eval_every = 5;  // 0 = only at the last iteration
  int eval_games = 100;
  std::vector<std::string> eval_opponents;
  PlayMode eval_play = PlayMode::kGreedy;  // how the strategy network plays the bots
  int eval_max_steps = 10000;
  lc::Rules rules;
  // Checkpoints and distributed runs.
  int save_every = 50;
  bool include_memories = false;
  bool keep_snapshots = false;  // run_dir/snapshots (apps/algorithms/snapshots.h)
  double distributed_timeout_seconds = 300;
  // Fault injection for the tests of the non-finite policy (0 = off): set only through the
  // tests' seam (apply_test_faults, the CFR_TEST_FAULTS variable), never by a config.
  int nonfinite_target_iteration = 0;
  int nonfinite_weights_iteration = 0;
};

}  // namespace cfr
