// An algorithm declares its own network set: here four networks of four different widths (more
// than Deep CFR's three), queried by a traversal written in the test, run by every registered
// scheduler with stand-in evaluators. Batchers, flush policies and schedulers size themselves from
// the evaluators they are given.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sched/evaluator.h"
#include "sched/scheduler.h"
#include "tests/sched/helpers.h"

using namespace cfr;

namespace {

constexpr int kNets = 4;
constexpr int kInputs[kNets] = {3, 5, 7, 2};
constexpr int kOutputs[kNets] = {2, 9, 1, 4};

/// Each traversal queries every network `rounds` times in a traversal-dependent order, then
/// records what it read as one "advantage" sample: input = its index, target = the sum of every
/// output it saw, per network.
Task<void> four_net_traversal(TraversalContext& ctx, int rounds) {
  std::vector<float> in(8), out(16);
  float sums[kNets] = {};
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < kNets; ++k) {
      const int net = (k + ctx.index + r) % kNets;
      for (int i = 0; i < kInputs[net]; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(ctx.index * 10 + r + i);
      co_await ctx.query(net, in.data(), ActionMask{1}, out.data());
      for (int o = 0; o < kOutputs[net]; ++o) sums[net] += out[static_cast<std::size_t>(o)];
      ++ctx.nodes;
    }
  const int s = ctx.advantage.push(ctx.traverser, ctx.iteration, ActionMask{1});
  ctx.advantage.input(s)[0] = static_cast<float>(ctx.index);
  for (int k = 0; k < kNets; ++k) ctx.advantage.target(s)[k] = sums[k];
}

}  // namespace

TEST_CASE("a four-network algorithm runs through every scheduler: its widths, batches and outputs") {
  register_builtin_schedulers();
  std::vector<std::unique_ptr<Evaluator>> owned;
  std::vector<Evaluator*> nets;
  for (int k = 0; k < kNets; ++k) {
    owned.push_back(std::make_unique<HashEvaluator>(kInputs[k], kOutputs[k], 500 + static_cast<std::uint64_t>(k)));
    nets.push_back(owned.back().get());
  }
  constexpr int kTraversals = 40, kRounds = 3;
  TraversalJob job{.iteration = 2,
                   .traverser = 1,
                   .num_traversals = kTraversals,
                   .seed = 9,
                   .input_width = 1,
                   .output_width = kNets,
                   .start = [](TraversalContext& ctx) { return four_net_traversal(ctx, kRounds); }};
  testing::CollectingSink reference(1, kNets);
  make_scheduler("recursive", {})->run(job, nets, reference);
  REQUIRE(reference.advantage.size() == kTraversals);
  for (const auto& name : scheduler_names()) {
    for (const SchedulerOptions& profile :
         {SchedulerOptions{{"window", 16}, {"max_batch", 8}, {"threads", 1}},
          SchedulerOptions{{"window", 9}, {"max_batch", 3}, {"threads", 2}, {"deadline_us", 50}}}) {
      const SchedulerOptions config = testing::declared_options(name, profile);
      CAPTURE(name);
      CAPTURE(config.describe());
      testing::CollectingSink got(1, kNets);
      const RunStats st = make_scheduler(name, config)->run(job, nets, got);
      CHECK(st.traversals == kTraversals);
      CHECK(st.batch.requests == std::int64_t{kTraversals} * kRounds * kNets);
      CHECK(st.batch.max_batch_seen() <= testing::option_or(profile, "max_batch", 0));
      CHECK(testing::same_samples(got.advantage, reference.advantage));
    }
  }
  // The outputs are each network's own: a query of network k reads kOutputs[k] floats of
  // evaluator k (a batcher mixing up networks or widths changes the sums).
  std::vector<float> in(8), out(16);
  float want[kNets] = {};
  const int index = 7;
  for (int r = 0; r < kRounds; ++r)
    for (int k = 0; k < kNets; ++k) {
      const int net = (k + index + r) % kNets;
      for (int i = 0; i < kInputs[net]; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(index * 10 + r + i);
      const std::vector<ActionMask> legal{ActionMask{1}};
      nets[static_cast<std::size_t>(net)]->evaluate(std::span<const float>(in.data(), static_cast<std::size_t>(kInputs[net])),
                                                    legal, std::span<float>(out.data(), static_cast<std::size_t>(kOutputs[net])));
      for (int o = 0; o < kOutputs[net]; ++o) want[net] += out[static_cast<std::size_t>(o)];
    }
  for (int k = 0; k < kNets; ++k) CHECK(reference.advantage.target(index)[k] == want[k]);
}

TEST_CASE("a batcher refuses an empty or oversized network set") {
  std::vector<Evaluator*> none;
  CHECK_THROWS_AS(Batcher(none, 8, 8), CheckError);
  UniformEvaluator u(1, 1);
  std::vector<Evaluator*> too_many(static_cast<std::size_t>(Batcher::kMaxNets + 1), &u);
  CHECK_THROWS_AS(Batcher(too_many, 8, 8), CheckError);
  std::vector<Evaluator*> sixty_four(static_cast<std::size_t>(Batcher::kMaxNets), &u);
  CHECK(Batcher(sixty_four, 8, 8).num_nets() == Batcher::kMaxNets);
}
