#pragma once
// The training algorithms cfr-run offers ([algorithm] name = "<name>"), registered by name as the
// schedulers are (sched/scheduler.h). Each algorithm's folder apps/algorithms/<name>/ registers, in
// one AlgorithmInfo: its name, its own config section [<name>] (typed options with defaults,
// ranges, choices and help; config.cc builds the keys, --print-config and --set from them), its
// cross-field validation, its network set and the network of it that plays, its memory estimate,
// the bot its game adapter needs, whether it has traversal ranks (mpirun) and its trainer factory.
// Everything else (config.cc, the driver apps/train/driver.cc, checkpoint players, cfr-export, the key
// sweep) reads the registry; no other file names an algorithm.
//
// LibTorch-free: the config, its fuzzers and the checkpoint tools read it. The trainer factories
// (LibTorch) are attached by register_builtin_trainers() (apps/train/trainers.h) in the
// programs that train; a build without them still parses, validates and prints every algorithm's
// keys.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nets/network_spec.h"

namespace cfr {

struct Config;
class Trainer;
struct TrainerSetup;

/// A value of an algorithm's option: an integer, a real, a flag, a string or a list of strings.
using OptionValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::string>>;

/// One key of an algorithm's [<name>] section. Make them with integer_option, real_option,
/// bool_option, string_option and list_option.
struct AlgorithmOption {
  std::string name;
  OptionValue default_value;         // its alternative is the option's type
  double min = 0, max = 0;           // integers and reals: the valid range, inclusive
  std::vector<std::string> choices;  // strings: the valid values (empty: any string)
  std::string help;
};
AlgorithmOption integer_option(std::string name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                               std::string help);
AlgorithmOption real_option(std::string name, double default_value, double min, double max, std::string help);
AlgorithmOption bool_option(std::string name, bool default_value, std::string help);
AlgorithmOption string_option(std::string name, std::string default_value, std::vector<std::string> choices, std::string help);
/// A TOML array of strings (`key = ["a", "b"]`); what each string may be is the algorithm's
/// validate() to check.
AlgorithmOption list_option(std::string name, std::vector<std::string> default_value, std::string help);

/// The values of one algorithm's section (Config::algorithm_options[name]): every declared option
/// is present (its default unless the config sets it). The accessors throw std::logic_error for
/// an option the algorithm does not declare or of another type (a bug in the algorithm's code).
struct AlgorithmSettings {
  std::map<std::string, OptionValue> values;
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  const std::vector<std::string>& list(const std::string& name) const;
};

/// What an algorithm's memories need when full, for the check against the memory this process
/// may use (memory.check_ram): "{where}: memory: {what} {GiB} GiB when full ({detail}), more than
/// 90% of ... ; {fix} (or set memory.check_ram = false)".
struct MemoryNeed {
  double bytes = 0;
  std::string what;    // "mmd.capacity = N needs"
  std::string detail;  // how the bytes add up
  std::string fix;     // "lower it"
};

/// Says where a key's value came from (the config file, or the --set that set it last).
using KeyOrigin = std::function<std::string(const std::string& key)>;
/// Builds the algorithm's trainer (apps/algorithms/deep_cfr/trainer.h, TrainerSetup).
using TrainerFactory = std::unique_ptr<Trainer> (*)(const TrainerSetup& setup);

struct AlgorithmInfo {
  std::string name;
  std::string description;               // one line: who, what (the help of algorithm.name lists them)
  std::vector<AlgorithmOption> options;  // its section [name]; none: no section
  /// The network set a config of it trains on a game of input width W and A actions (in the order
  /// its trainer and traversals index it; a network's shape may depend on the algorithm's options,
  /// e.g. mmd.value_input), and the index of the network that plays (logits over the actions,
  /// softmax = the policy): what the checkpoint players, the ladder, cfr-export and the exact
  /// evaluation read.
  std::function<NetworkSpecs(const Config&, int input_width, int num_actions)> networks;
  int playing_network = 0;
  /// Cross-field checks of a config that selects it, after parsing (InputError naming the key
  /// and origin(key)). Null: none.
  std::function<void(const Config&, const KeyOrigin& origin)> validate;
  /// Its memories when full, on a game of input width W and A actions.
  std::function<MemoryNeed(const Config&, int input_width, int num_actions)> memory;
  /// The bot the game's traversal adapter needs (GameSettings::opponent_bot; empty: none). Null:
  /// traversal.opponent_bot when traversal.opponent_policy = "bot" or cutoff_value_mode =
  /// "bot_rollout" (Deep CFR's traversals).
  std::function<std::string(const Config&)> opponent_bot;
  /// Whether it runs as an MPI job (its trainer's serve_learner on the traversal ranks); else a
  /// distributed run is refused before anything runs.
  bool distributed = false;
  /// Whether its trainer trains with data-parallel learner ranks (distributed.learners > 1:
  /// Distributed::train on the learner, serve_training on ranks 1..N-1); else such a run is refused.
  bool data_parallel = false;
  /// Whether checkpoint.keep_snapshots keeps Single Deep CFR's advantage snapshots (the set's
  /// first two networks: regret networks per player) that snapshots:RUN_DIR plays.
  bool advantage_snapshots = false;
  TrainerFactory make_trainer = nullptr;  // null in programs built without the trainers
};

/// Registers `info` under info.name, replacing an algorithm of that name.
void register_algorithm(AlgorithmInfo info);
/// The registered names, sorted.
std::vector<std::string> algorithm_names();
/// The algorithm called `name`; InputError "algorithm.name = 'x'; valid: a, b" otherwise.
AlgorithmInfo find_algorithm(std::string_view name);

/// The trainer factories of the built-in algorithms (LibTorch: register_builtin_trainers).
struct BuiltinTrainers {
  TrainerFactory deep_cfr = nullptr;
  TrainerFactory escher = nullptr;  // Deep CFR's trainer with ESCHER's step
  TrainerFactory mmd = nullptr;
};
/// Registers deep_cfr, escher and mmd (apps/train/builtin.cc: the one list). Without
/// trainers it registers them once and never replaces a registration with trainers: config.cc
/// calls it, so that any program that parses a config knows every built-in algorithm's keys.
void register_builtin_algorithms(const BuiltinTrainers& trainers = {});

}  // namespace cfr
