#include "python/traverse.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/deep_cfr/options.h"
#include "apps/run/options.h"
#include "engine/core/errors.h"
#include "engine/games/games.h"
#include "engine/traversal/traversal.h"
#include "sched/phase_shares.h"
#include "sched/sample_pipe.h"

namespace cfr::py {

Config traverse_config(const ConfigSource& source) {
  Config c =
      source.path ? load_config(*source.path) : parse_config(source.text.value_or(""), source.text ? "config" : "(defaults)");
  for (const auto& s : source.set) apply_override(c, s);
  if (source.game) {
    c.run.game = *source.game;
    if (source.rules) c.rules = *source.rules;
  }
  validate(c);
  if (c.algorithm.name != "deep_cfr")
    throw InputError(
        fmt::format("cfr.traverse runs Deep CFR's traversals; the config's algorithm.name is '{}'", c.algorithm.name));
  return c;
}

TraverseNetworks traverse_networks(const Config& c) {
  const auto [w, a] = game_widths(c);
  TraverseNetworks n{.input_width = w, .output_width = a, .names = {}};
  for (const auto& spec : deep_cfr_networks(w, a)) n.names.push_back(spec.name);
  return n;
}

std::unique_ptr<Evaluator> make_builtin_evaluator(const std::string& name, int net, int input_width, int output_width) {
  if (name == "uniform") return std::make_unique<UniformEvaluator>(input_width, output_width);
  if (name == "hash") return std::make_unique<HashEvaluator>(input_width, output_width, static_cast<std::uint64_t>(net) + 1);
  throw InputError(fmt::format("evaluator '{}': give a callable, or a built-in stand-in: uniform, hash", name));
}

TraverseResult run_traversals(const Config& config, const TraverseJob& j, std::span<Evaluator* const> nets) {
  Config c = config;
  if (j.scheduler) c.traversal.scheduler = *j.scheduler;
  for (const auto& [k, v] : j.scheduler_options)
    apply_override(c, fmt::format("scheduler.{}.{}={}", c.traversal.scheduler, k, v));
  validate(c);
  const RunOptions run = run_options(c);
  const DeepCfrOptions o = deep_cfr_options(c);
  const TraverseNetworks shape = traverse_networks(c);
  const int traversals = j.traversals.value_or(o.traversals_per_player);
  if (traversals < 1) throw InputError(fmt::format("traversals = {} must be at least 1", traversals));
  if (j.iteration < 1) throw InputError(fmt::format("iteration = {} must be at least 1", j.iteration));
  if (j.traverser != 0 && j.traverser != 1) throw InputError(fmt::format("traverser = {} must be 0 or 1", j.traverser));
  if (j.first_index < 0) throw InputError(fmt::format("first_index = {} must be at least 0", j.first_index));
  if (std::int64_t{j.first_index} + traversals > std::numeric_limits<int>::max())
    throw InputError(fmt::format("first_index + traversals = {} is beyond 2^31 - 1 (traversal indices are 32-bit)",
                                 std::int64_t{j.first_index} + traversals));
  CFR_CHECK(nets.size() == shape.names.size(), "one evaluator per network");
  for (Evaluator* e : nets) {
    const EvaluatorInfo info = e->info();
    CFR_CHECK(info.input_width == shape.input_width && info.output_width == shape.output_width, "evaluator widths");
  }
  auto scheduler = make_scheduler(run.scheduler, run.scheduler_options);
  TraverseResult r;
  r.traversals = traversals;
  r.iteration = j.iteration;
  r.traverser = j.traverser;
  r.seed = j.seed.value_or(run.seed);
  r.scheduler = run.scheduler;
  r.scheduler_options = run.scheduler_options.describe();
  // BufferedShare keeps whole traversals in index order, as a parallel share of cfr-run's phase
  // is kept until the shares before it are delivered.
  BufferedShare sink;
  sink.begin(shape.input_width, shape.output_width);
  visit_registered_game(c.run.game, [&]<class R>(R) {
    const auto game = R::Adapter::from_settings(game_settings(c));
    const TraversalJob job{.iteration = j.iteration,
                           .traverser = j.traverser,
                           .num_traversals = traversals,
                           .first_index = j.first_index,
                           .seed = r.seed,
                           .input_width = shape.input_width,
                           .output_width = shape.output_width,
                           .start = [&](TraversalContext& ctx) { return traverse(ctx, game, o.traversal); }};
    r.stats = scheduler->run(job, nets, sink, nullptr);
  });
  r.advantage = std::move(sink.carrier.advantage);
  r.strategy = std::move(sink.carrier.strategy);
  SampleDigest da, ds;
  da.add(r.advantage);
  ds.add(r.strategy);
  r.digest_advantage = da.value();
  r.digest_strategy = ds.value();
  return r;
}

}  // namespace cfr::py
