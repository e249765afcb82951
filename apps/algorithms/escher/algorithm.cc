// ESCHER's registration (apps/run/algorithm_registry.h): its [escher] keys, checks, network set and
// memory; its trainer is Deep CFR's with ESCHER's step (make_escher_trainer). LibTorch-free.
#include <fmt/format.h>

#include "apps/algorithms/deep_cfr/escher_networks.h"
#include "apps/algorithms/deep_cfr/escher_options.h"
#include "apps/algorithms/deep_cfr/options.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/config.h"
#include "apps/run/options.h"
#include "engine/core/errors.h"

namespace cfr {

EscherRunOptions escher_options(const Config& c) {
  const AlgorithmSettings& e = c.algorithm_options.at("escher");
  TrainConfig value = run_options(c).training;  // the value memory holds one iteration's samples: no weighting
  value.updates = static_cast<int>(e.integer("value_updates_per_iteration"));
  value.batch_size = static_cast<int>(e.integer("value_batch_size"));
  value.linear_weighting = false;
  return {.traversal = {.sampling_epsilon = e.real("sampling_epsilon"),
                        .value_epsilon = e.real("value_epsilon"),
                        .value_target = e.text("value_target") == "importance_weighted" ? EscherValueTarget::kImportanceWeighted
                                                                                        : EscherValueTarget::kReturn,
                        .value_clip = e.real("value_clip"),
                        .max_nodes = c.traversal.max_nodes_per_traversal,
                        .cutoff = cutoff_value(c),
                        .fallback = rm_fallback(c),
                        .rm_epsilon = c.traversal.regret_matching_epsilon},
          .value_traversals = static_cast<int>(e.integer("value_traversals")),
          .value_training = value,
          .value_capacity = e.integer("value_capacity"),
          .reinitialize_value = e.flag("reinitialize_value")};
}

void register_escher_algorithm(TrainerFactory make_trainer) {
  constexpr std::int64_t kBig = std::int64_t{1} << 40, kMaxRows = 1 << 24;
  register_algorithm({
      .name = "escher",
      .description = "escher (McAleer et al. 2023: a history value network gives every action's regret, the traverser "
                     "samples from a fixed policy, no importance weights)",
      // Its regret, strategy and memory keys are Deep CFR's: traversal.*, optimization.advantage_* / strategy_*, memory.*.
      .options = {integer_option("value_traversals", 1000, 1, 100'000'000, "value trajectories per iteration"),
                  real_option("sampling_epsilon", 1.0, 0, 1,
                              "the traverser samples from sampling_epsilon * uniform + (1 - sampling_epsilon) * its current "
                              "policy (1 = uniform: the fixed sampling policy of the paper)"),
                  real_option("value_epsilon", 0.05, 0, 1, "exploration (uniform share) of the value trajectories"),
                  string_option("value_target", "return", {"return", "importance_weighted"},
                                "a value sample's target: the return of the rest of its trajectory, or that return "
                                "importance-weighted by sigma/q over the later decisions (unbiased for the unexplored profile)"),
                  real_option("value_clip", 500, 0, 1e12, "clip of importance-weighted value targets (0 = none)"),
                  integer_option("value_updates_per_iteration", 300, 0, 100'000'000, "steps of the value net"),
                  integer_option("value_batch_size", 512, 1, kMaxRows, "batch of a value step"),
                  integer_option("value_capacity", 1'000'000, 1, kBig, "samples in the value memory (emptied every iteration)"),
                  bool_option("reinitialize_value", false, "re-initialise the value net every iteration")},
      .networks = [](const Config&, int W, int A) { return escher_networks(W, A); },
      .playing_network = kStrategyNet,
      .validate =
          [](const Config& c, const KeyOrigin& origin) {
            if (c.traversal.algorithm != "outcome_sampling")
              throw InputError(
                  fmt::format("{}: traversal.algorithm = '{}' is Deep CFR's; algorithm.name = 'escher' samples its "
                              "own trajectories (its keys are in [escher])",
                              origin("traversal.algorithm"), c.traversal.algorithm));
            if (c.algorithm_options.at("deep_cfr").flag("overlap"))
              throw InputError(
                  fmt::format("{}: deep_cfr.overlap = true is Deep CFR's; algorithm.name = 'escher' trains its value network "
                              "between the value trajectories and the regret phases, which do not overlap yet",
                              origin("deep_cfr.overlap")));
            if (c.traversal.opponent_policy != "average_strategy")
              throw InputError(
                  fmt::format("{}: traversal.opponent_policy = '{}' is Deep CFR's; with algorithm.name = 'escher' "
                              "the opponent plays its current policy",
                              origin("traversal.opponent_policy"), c.traversal.opponent_policy));
          },
      .memory = [](const Config& c, int W,
                   int A) { return deep_cfr_memory(c, W, A, c.algorithm_options.at("escher").integer("value_capacity")); },
      .opponent_bot = nullptr,
      .distributed = true,  // the traversal ranks run the value trajectories too (deep_cfr/trainer.cc)
      .data_parallel = true,
      .advantage_snapshots = true,
      .make_trainer = make_trainer,
  });
}

}  // namespace cfr
