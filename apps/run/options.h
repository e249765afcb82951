#pragma once
// The typed options every training algorithm shares: the run (seed, length, time budget), its
// networks' shape, the scheduler, the sample pipe, the base training settings, evaluation,
// checkpoints and the numeric-fault policy. Built once from a config by the driver
// (apps/train/driver.cc, run_options); each algorithm builds its own options from its own section
// (apps/algorithms/<name>/options.h). Choices are enums here; the config's strings are compared
// once, where they are parsed.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apps/run/checkpoint_format.h"
#include "apps/run/play_mode.h"
#include "engine/games/lost_cities.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr {

struct Config;

enum class NonfinitePolicy { kSkip, kStop };

struct RunOptions {
  std::uint64_t seed = 79;
  int max_iterations = 100;
  double max_minutes = 0;  // 0 = no limit
  int torch_threads = 1;
  std::string experiment_name;
  CheckpointShape shape;  // the game's name and the networks' shape, as checkpoints record them
  NetworkConfig network;
  // Why the networks compute in network.precision, for the run's log (RunContext::start): the
  // driver resolves a requested bf16 or auto once (resolve_precision) into network.precision
  // ("fp32" or "bf16") and this line; empty (fp32 asked for): nothing is said.
  std::string precision_note = {};
  std::string scheduler = "interleaved";  // a registered scheduler
  SchedulerOptions scheduler_options;     // the scheduler's own (sched/scheduler.h)
  SamplePipeOptions pipe;
  bool check_ram = true;
  /// [optimization]'s learning rate, weight decay, gradient clip and weight average, with
  /// [training_weighting]'s linear weighting: what every network's training starts from.
  TrainConfig training;
  int learning_rate_decay_iterations = 0;  // 0 = constant; else lr / sqrt(1 + (t - 1) / this)
  NonfinitePolicy nonfinite = NonfinitePolicy::kSkip;
  // Evaluation (games with bots: matches under `rules`; enumerable games: exact).
  int eval_every = 5;  // 0 = only at the last iteration
  int eval_games = 100;
  std::vector<std::string> eval_opponents;
  PlayMode eval_play = PlayMode::kGreedy;  // how the network that plays plays the bots
  int eval_max_steps = 10000;
  lc::Rules rules;
  // Checkpoints and distributed runs.
  int save_every = 50;
  bool include_memories = false;
  double distributed_timeout_seconds = 300;
  int distributed_learners = 1;  // distributed.learners: data-parallel learner ranks
  // Fault injection for the tests of the non-finite policy (0 = off): set only through the
  // tests' seam (apply_test_faults, the CFR_TEST_FAULTS variable), never by a config.
  int nonfinite_target_iteration = 0;
  int nonfinite_weights_iteration = 0;
};

/// The shared options of a config.
RunOptions run_options(const Config& c);
/// The game settings of a config (what the registered game's traversal adapter is made from;
/// its bot is the selected algorithm's AlgorithmInfo::opponent_bot).
GameSettings game_settings(const Config& cfg);
/// Input width of the configured game's encoding and its number of actions.
std::pair<int, int> game_widths(const Config& cfg);
/// The config's traversal.cutoff_value_mode and regret_matching.all_negative_fallback, read by
/// every algorithm's traversals or rollouts.
CutoffValue cutoff_value(const Config& c);
RmFallback rm_fallback(const Config& c);

}  // namespace cfr
