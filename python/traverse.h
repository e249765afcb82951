#pragma once
// cfr.traverse's C++ side (module.cc binds it): one phase of Deep CFR traversals exactly as cfr-run
// runs them — the engine's traversal coroutines (engine/traversal/traversal.h `traverse`) over the
// registered game's adapter, their options, game settings and scheduler read from a cfr-run config
// by cfr-run's own functions (apps/run/config.h, deep_cfr_options, game_settings) — with the
// networks answered by whatever evaluators the caller gives (a Python callable, module.cc's
// PyEvaluator; or the built-in stand-ins). The samples come back whole, in traversal-index
// order, as the trainer's memories would receive them. pybind11-free.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/run/config.h"
#include "engine/traversal/traversal_context.h"
#include "sched/evaluator.h"
#include "sched/scheduler.h"

namespace cfr::py {

/// Where a config comes from: a TOML file, TOML text (a dict made TOML), or cfr-run's defaults.
struct ConfigSource {
  std::optional<std::string> path;  // a TOML file
  std::optional<std::string> text;  // TOML text (where: "config")
  std::vector<std::string> set;     // "section.key=value" overrides, as cfr-run --set
  /// The game to traverse, overriding run.game (and, for Lost Cities, the rules when given).
  std::optional<std::string> game;
  std::optional<lc::Rules> rules;
};

/// The config, overrides applied and validated (InputError naming the key, as cfr-run says it).
Config traverse_config(const ConfigSource& source);

/// What one call traverses (defaults: the config's).
struct TraverseJob {
  std::optional<int> traversals;  // traversal.traversals_per_player
  int iteration = 1;
  int traverser = 0;
  std::optional<std::uint64_t> seed;             // run.seed
  int first_index = 0;                           // traversal j draws from the RNG stream of index first_index + j
  std::optional<std::string> scheduler;          // traversal.scheduler
  std::map<std::string, int> scheduler_options;  // over [scheduler.<name>]'s
};

/// The network set the traversals query (Deep CFR's: advantage0, advantage1, strategy), each
/// mapping input_width floats to output_width.
struct TraverseNetworks {
  int input_width = 0;
  int output_width = 0;
  std::vector<std::string> names;
};
TraverseNetworks traverse_networks(const Config& c);

/// A built-in stand-in network (sched/evaluator.h): "uniform" (zeros) or "hash" (HashEvaluator
/// seeded net + 1: pseudo-random outputs in [−1, 1) from the input's bits). InputError otherwise.
std::unique_ptr<Evaluator> make_builtin_evaluator(const std::string& name, int net, int input_width, int output_width);

struct TraverseResult {
  SampleBuffer advantage;  // the traverser's regret samples
  SampleBuffer strategy;   // σ samples (the traverser's, or the opponent's under external sampling)
  RunStats stats;
  std::uint64_t digest_advantage = 0;  // cfr-run's per-stream SampleDigest of these samples
  std::uint64_t digest_strategy = 0;
  int traversals = 0, iteration = 0, traverser = 0;
  std::uint64_t seed = 0;
  std::string scheduler;
  std::string scheduler_options;  // "name=value, ..."
};

/// Runs the job's traversals on the calling thread (the scheduler may start its own threads and
/// call the evaluators from them, one at a time). nets: one evaluator per network of
/// traverse_networks(c). Throws what a traversal, evaluator or the scheduler threw (the run is
/// abandoned cleanly, sched/scheduler.h); InputError for bad job values.
TraverseResult run_traversals(const Config& c, const TraverseJob& job, std::span<Evaluator* const> nets);

}  // namespace cfr::py
