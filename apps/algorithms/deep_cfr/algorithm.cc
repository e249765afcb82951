// Deep CFR's registration (apps/run/algorithm_registry.h) and its typed options from a config.
// LibTorch-free.
#include <fmt/format.h>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/algorithms/deep_cfr/options.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/config.h"
#include "apps/run/options.h"
#include "engine/core/errors.h"
#include "engine/memory/reservoir.h"

namespace cfr {

DeepCfrOptions deep_cfr_options(const Config& c) {
  const auto& t = c.traversal;
  const auto& op = c.optimization;
  const bool linear = c.weighting_mode == "lcfr";
  const TrainConfig base{.learning_rate = op.learning_rate,
                         .weight_decay = op.weight_decay,
                         .grad_clip = op.grad_clip,
                         .linear_weighting = linear,
                         .ema_decay = op.ema_decay};
  TrainConfig adv = base, strat = base;
  adv.updates = op.advantage_updates_per_iteration;
  adv.batch_size = op.advantage_batch_size;
  adv.target_scale = op.advantage_target_scale;
  strat.updates = op.strategy_updates_per_iteration;
  strat.batch_size = op.strategy_batch_size;
  return {
      .traversals_per_player = t.traversals_per_player,
      .traversal = {.kind =
                        t.algorithm == "external_sampling" ? TraversalKind::kExternalSampling : TraversalKind::kOutcomeSampling,
                    .epsilon = t.outcome_sampling_epsilon,
                    .prob_floor = t.probability_floor,
                    .value_clip = t.outcome_sampling_value_clip,
                    .unsampled =
                        t.outcome_unsampled_regret == "zero" ? UnsampledRegret::kZero : UnsampledRegret::kNegativeNodeValue,
                    .max_nodes = t.max_nodes_per_traversal,
                    .cutoff = cutoff_value(c),
                    .opponent = t.opponent_policy == "average_strategy" ? OpponentPolicy::kAverageStrategy
                                : t.opponent_policy == "network"        ? OpponentPolicy::kNetwork
                                                                        : OpponentPolicy::kBot,
                    .fallback = rm_fallback(c),
                    .rm_epsilon = t.regret_matching_epsilon},
      .update_order = t.update_order == "alternating" ? UpdateOrder::kAlternating : UpdateOrder::kSimultaneous,
      .parallel_shares = t.parallel_shares,
      .advantage_training = adv,
      .strategy_training = strat,
      .reinitialize_advantage = op.reinitialize_advantage,
      .linear_weighting = linear,
      .advantage_capacity = c.memory.advantage_capacity,
      .strategy_capacity = c.memory.strategy_capacity,
      .merge_duplicates = c.memory.merge_duplicates,
      .keep_snapshots = c.checkpoint.keep_snapshots,
      .overlap = c.algorithm_options.at("deep_cfr").flag("overlap"),
      .escher = std::nullopt,
  };
}

MemoryNeed deep_cfr_memory(const Config& c, int W, int A, std::int64_t value_capacity) {
  // With merge_duplicates each memory has a view keeping a few bytes per slot (its rows, a copy
  // per distinct input, are what merging is for: few where it pays; see the run's warning).
  const auto& m = c.memory;
  const double per =
      static_cast<double>(ReservoirMemory::bytes_per_sample(W, A) + (m.merge_duplicates ? MergedSamples::kBytesPerSlot : 0));
  double need = per * (2.0 * static_cast<double>(m.advantage_capacity) + static_cast<double>(m.strategy_capacity));
  if (value_capacity > 0)  // ESCHER's value memory: history inputs (2·W), never merged
    need += static_cast<double>(ReservoirMemory::bytes_per_sample(2 * W, A)) * static_cast<double>(value_capacity);
  return {
      .bytes = need,
      .what = fmt::format("advantage_capacity = {} and strategy_capacity = {}{} need", m.advantage_capacity, m.strategy_capacity,
                          value_capacity > 0 ? fmt::format(" and escher.value_capacity = {}", value_capacity) : ""),
      .detail = fmt::format("2 × {} + {} samples × {} bytes of {} → {} floats{}", m.advantage_capacity, m.strategy_capacity,
                            static_cast<std::int64_t>(per), W, A,
                            value_capacity > 0 ? fmt::format(", + {} value samples of {} floats", value_capacity, 2 * W) : ""),
      .fix = "lower the capacities"};
}

void register_deep_cfr_algorithm(TrainerFactory make_trainer) {
  register_algorithm({
      .name = "deep_cfr",
      .description = "deep_cfr (Brown et al. 2019)",
      // Its other keys are the shared sections' ([traversal], [optimization], [memory]).
      .options = {bool_option("overlap", false,
                              "iteration t + 1's traversals run while iteration t's networks train, against the networks "
                              "published one iteration before (one process; simultaneous updates; one iteration's "
                              "samples held until its start; docs/deep-cfr.md)")},
      .networks = [](const Config&, int W, int A) { return deep_cfr_networks(W, A); },
      .playing_network = kStrategyNet,
      .validate =
          [](const Config& c, const KeyOrigin& origin) {
            // Alternating updates train advantage net 0 between the players' phases: the phases of an
            // iteration played ahead cannot wait for it.
            if (c.algorithm_options.at("deep_cfr").flag("overlap") && c.traversal.update_order == "alternating")
              throw InputError(
                  fmt::format("{}: deep_cfr.overlap = true with traversal.update_order = 'alternating': the next "
                              "iteration's phases run before this one's advantage net 0 is trained; set "
                              "traversal.update_order = 'simultaneous' or deep_cfr.overlap = false",
                              origin("deep_cfr.overlap")));
          },
      .memory = [](const Config& c, int W, int A) { return deep_cfr_memory(c, W, A, 0); },
      .opponent_bot = nullptr,
      .distributed = true,
      .data_parallel = true,
      .advantage_snapshots = true,
      .make_trainer = make_trainer,
  });
}

}  // namespace cfr
