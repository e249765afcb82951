#pragma once
// Helpers for the traversal and scheduler tests.
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/games/kuhn.h"
#include "engine/games/leduc.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/game_tree.h"
#include "engine/tabular/policy.h"
#include "engine/traversal/determinized_search.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "sched/evaluator.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr::testing {

/// A stand-in for the networks: the policy's logits are `logits` for every row, the value is
/// `value` for every row; it counts rows.
class FixedNets final : public SearchNets {
 public:
  FixedNets(std::vector<float> logits, float value) : logits_(std::move(logits)), value_(value) {}
  void forward(int net, std::span<const float>, std::span<const ActionMask> legal, std::span<float> outputs) override {
    if (net == 0) {
      for (std::size_t r = 0; r < legal.size(); ++r)
        std::copy(logits_.begin(), logits_.end(), outputs.begin() + r * logits_.size());
      policy_rows += static_cast<long>(legal.size());
    } else {
      std::fill(outputs.begin(), outputs.end(), value_);
      value_rows += static_cast<long>(legal.size());
    }
  }
  long policy_rows = 0, value_rows = 0;

 private:
  std::vector<float> logits_;
  float value_;
};

/// Keeps every sample in delivery order, and the order of traversal indices.
class CollectingSink final : public SampleSink {
 public:
  CollectingSink(int in_w, int out_w) {
    advantage.configure(in_w, out_w);
    strategy.configure(in_w, out_w);
  }
  void consume(const TraversalContext& ctx) override {
    advantage.append(ctx.advantage);
    strategy.append(ctx.strategy);
    order.push_back(ctx.index);
    nodes += ctx.nodes;
    arena_high_water = std::max(arena_high_water, ctx.arena().high_water());
    digest.add(ctx.advantage);
    digest.add(ctx.strategy);
  }
  SampleBuffer advantage, strategy;
  std::vector<int> order;
  std::int64_t nodes = 0;
  std::size_t arena_high_water = 0;
  SampleDigest digest;
};

inline bool same_samples(const SampleBuffer& a, const SampleBuffer& b) {
  return a.inputs == b.inputs && a.targets == b.targets && a.masks == b.masks && a.iterations == b.iterations &&
         a.players == b.players;
}

/// Three evaluators (advantage 0, advantage 1, strategy) of one kind.
struct Nets {
  std::vector<std::unique_ptr<Evaluator>> owned;
  std::array<Evaluator*, kNumNets> ptrs{};
  std::span<Evaluator* const> span() const { return {ptrs.data(), ptrs.size()}; }
};

inline Nets hash_nets(int in_w, int out_w, double latency_us = 0) {
  Nets n;
  for (int i = 0; i < kNumNets; ++i) {
    n.owned.push_back(std::make_unique<HashEvaluator>(in_w, out_w, 1000 + static_cast<std::uint64_t>(i), latency_us));
    n.ptrs[static_cast<std::size_t>(i)] = n.owned.back().get();
  }
  return n;
}

/// The options of `wanted` that scheduler `name` declares (a scheduler that has no window, say,
/// ignores it): one option profile runs across every registered scheduler.
inline SchedulerOptions declared_options(const std::string& name, const SchedulerOptions& wanted) {
  SchedulerOptions out;
  for (const auto& o : scheduler_options(name)) {
    const auto it = wanted.values().find(o.name);
    if (it != wanted.values().end()) out.set(o.name, it->second);
  }
  return out;
}
/// `name`'s value in `options`, or `fallback` when absent.
inline int option_or(const SchedulerOptions& options, const std::string& name, int fallback) {
  const auto it = options.values().find(name);
  return it == options.values().end() ? fallback : it->second;
}

inline Nets uniform_nets(int in_w, int out_w) {
  Nets n;
  for (int i = 0; i < kNumNets; ++i) {
    n.owned.push_back(std::make_unique<UniformEvaluator>(in_w, out_w));
    n.ptrs[static_cast<std::size_t>(i)] = n.owned.back().get();
  }
  return n;
}

/// NashConv of the policy whose rows are `average`'s sums per information set, normalised (uniform
/// where an information set has none): tabular MCCFR's and tabular ESCHER's average strategy.
inline double average_nash_conv(const GameTree& tree, const TabularEvaluator& average) {
  TabularPolicy pol(tree);
  for (int i = 0; i < tree.num_infosets(); ++i) {
    const ActionMask legal = tree.infoset(i).legal;
    const double* row = average.find(tree.infoset_encoding(i));
    double sum = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) sum += row ? row[std::countr_zero(m)] : 0.0;
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      pol.row(i)[static_cast<std::size_t>(a)] = sum > 0 ? row[a] / sum : 1.0 / mask_count(legal);
    }
  }
  return exploitability(pol).nash_conv;
}

template <class G>
TraversalJob make_job(const G& game, const TraversalOptions& opts, int traversals, int iteration = 1, int traverser = 0,
                      std::uint64_t seed = 79) {
  TraversalJob job;
  job.iteration = iteration;
  job.traverser = traverser;
  job.num_traversals = traversals;
  job.seed = seed;
  job.input_width = game.input_width();
  job.output_width = game.num_actions();
  job.start = [&game, &opts](TraversalContext& ctx) { return traverse(ctx, game, opts); };
  return job;
}

}  // namespace cfr::testing
