#pragma once
// cfr-run's configuration: TOML sections as in deep-cfr.md §4. One field list (fields()) drives
// parsing, validation, defaults, --print-config and --set overrides; the [<algorithm>] and
// [scheduler.<name>] sections come from what each registered algorithm and scheduler declares; an unknown section or key, a
// wrong type or an out-of-range value is an InputError naming the file, the line, the key and the
// valid choices.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "apps/run/algorithm_registry.h"
#include "engine/games/lost_cities.h"

namespace cfr {

struct RunConfig {
  std::string experiment_name = "run";
  std::string game = "lost_cities";  // lost_cities | kuhn | leduc
  std::int64_t seed = 79;
  int max_iterations = 100;
  double max_minutes = 0;  // 0 = no limit
  std::string device = "cpu";
  int torch_threads = 1;
};
struct NetworkSection {
  int hidden_size = 512;
  int num_layers = 3;
  std::string activation = "relu";
  int invariant_chunk = 0;         // forward in chunks of exactly N rows: batch-invariant outputs (0 = off)
  std::string precision = "fp32";  // fp32 | bf16 | auto (nets/networks.h NetworkConfig::precision)
};
struct TraversalSection {
  int traversals_per_player = 280;
  std::string algorithm = "outcome_sampling";  // outcome_sampling | external_sampling
  int max_nodes_per_traversal = 1000;
  double regret_matching_epsilon = 1e-4;
  double outcome_sampling_epsilon = 0.05;
  double outcome_sampling_value_clip = 500;
  double probability_floor = 1e-4;
  std::string outcome_unsampled_regret = "zero";
  std::string cutoff_value_mode = "score_diff";
  std::string opponent_policy = "average_strategy";
  // simultaneous: both players' phases use the nets of the iteration's start (the reference);
  // alternating: advantage net 0 is trained and published between the phases (Brown et al.'s
  // Algorithm 1), so player 1's phase plays against player 0's new strategy.
  std::string update_order = "simultaneous";
  std::string opponent_bot = "random";
  std::string scheduler = "interleaved";  // its options: Config::scheduler_options
  int parallel_shares = 1;                // a phase without concurrent training split over this many threads
};
/// [algorithm]: which training algorithm (a registered one: apps/run/algorithm_registry.h).
struct AlgorithmSection {
  std::string name = "deep_cfr";
};
struct OptimizationSection {
  int advantage_updates_per_iteration = 512;
  int strategy_updates_per_iteration = 512;
  int advantage_batch_size = 1024;
  int strategy_batch_size = 1024;
  double learning_rate = 1e-4;
  int learning_rate_decay_iterations = 0;  // 0 = constant; else lr / sqrt(1 + (t - 1) / this)
  double weight_decay = 1e-4;
  double grad_clip = 1.0;
  double ema_decay = 0;               // 0 = publish the trained weights; β = publish their moving average
  double advantage_target_scale = 1;  // advantage nets regress on regret / this (regret matching is scale-free)
  bool reinitialize_advantage = false;
  std::string nonfinite_policy = "skip";  // skip | stop (NaN/inf in outputs, targets or losses)
};
struct MemorySection {
  std::int64_t advantage_capacity = 2'000'000;
  std::int64_t strategy_capacity = 2'000'000;
  int sample_pipe_blocks = 8;       // bound of the traversal → memory queue, in blocks
  int sample_block_samples = 4096;  // samples per block
  bool check_ram = true;            // refuse memories that cannot fit in this machine's RAM
  bool merge_duplicates = false;    // train on the samples merged per distinct input (MergedSamples)
};
struct EvaluationSection {
  int eval_every = 5;
  int games = 100;
  std::vector<std::string> opponents = {"random", "discard_only", "heuristic_cautious"};
  int max_steps = 10000;
  std::string play = "greedy";  // greedy | sampled: how the strategy network plays the bots
};

struct CheckpointSection {
  int save_every = 50;            // keep a checkpoint every N iterations (the latest is always kept)
  bool include_memories = false;  // also save the reservoir memories (exact resume)
  bool keep_snapshots = false;    // keep every iteration's advantage nets (Single Deep CFR's average)
};

struct DistributedSection {
  double timeout_seconds = 300;  // a traversal rank silent this long ends the run (naming it)
  int learners = 1;              // ranks 0..learners-1 train every network together (data-parallel)
};

struct Config {
  RunConfig run;
  lc::Rules rules;
  lc::EncodingOptions encoding;
  NetworkSection network;
  AlgorithmSection algorithm;
  /// [<algorithm>]: each registered algorithm's own options (AlgorithmInfo::options), by
  /// algorithm; fields() fills in the declared defaults. Only algorithm.name's are used.
  std::map<std::string, AlgorithmSettings> algorithm_options;
  TraversalSection traversal;
  std::string all_negative_fallback = "argmax";  // [regret_matching]
  std::string weighting_mode = "lcfr";           // [training_weighting] mode
  OptimizationSection optimization;
  MemorySection memory;
  EvaluationSection evaluation;
  CheckpointSection checkpoint;
  DistributedSection distributed;
  /// [scheduler.<name>]: each registered scheduler's options (sched/scheduler.h), by scheduler
  /// and option name; fields() fills in the declared defaults. Only traversal.scheduler's are used.
  std::map<std::string, std::map<std::string, int>> scheduler_options;
  std::string source = "(defaults)";   // the file the config came from
  std::vector<std::string> overrides;  // the --set assignments applied, in order (errors name them)
};

/// One configurable key.
struct ConfigField {
  std::string section, key, help;
  std::function<void(const void* toml_node, const std::string& where)> set;  // toml::node*
  std::function<std::string()> value;                                        // as TOML
  // Whether the key changes what the run computes (samples, training, networks). The others
  // change only how long it runs, how fast or where, what is reported, and what is kept: a
  // resumed run may change them freely (docs/deep-cfr.md "Resume").
  bool training = true;
};
std::vector<ConfigField> fields(Config& c);

/// A key whose value differs between two configs (values as TOML).
struct ConfigChange {
  std::string key;  // section.key
  std::string before, after;
  bool training = true;  // ConfigField::training
};
/// The keys whose values differ between `before` and `after`, in field order.
std::vector<ConfigChange> config_changes(Config& before, Config& after);

/// Parses a TOML file (InputError on any problem, naming file:line and key).
Config load_config(const std::string& path);
/// The same from a file's text; `where` names it in errors.
Config parse_config(std::string_view text, const std::string& where);
/// Applies "section.key=value" (value parsed as TOML, else taken as a string).
void apply_override(Config& c, const std::string& assignment);
/// Cross-field validation (game names, scheduler names, bots), after parsing and overrides.
void validate(const Config& c);
/// The resolved config as TOML.
std::string to_toml(Config& c);

}  // namespace cfr
