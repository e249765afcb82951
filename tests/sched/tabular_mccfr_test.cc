// The traversal math proven without networks: the coroutine traversals with tabular evaluators
// (regrets keyed by information state) are tabular MCCFR, measured by exact NashConv.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "tests/sched/helpers.h"

using namespace cfr;
using namespace cfr::testing;

namespace {

template <class S>
class TabularMccfr {
 public:
  TabularMccfr(const TraversalOptions& opts, const std::string& scheduler, const SchedulerOptions& cfg)
      : opts_(opts),
        tree_(GameTree::build<S>(std::string(S::kName))),
        W_(game_.input_width()),
        A_(game_.num_actions()),
        regrets0_(W_, A_),
        regrets1_(W_, A_),
        average_(W_, A_),
        strategy_(W_, A_),
        scheduler_(make_scheduler(scheduler, cfg)) {
    nets_[kAdvantageNet0] = &regrets0_;
    nets_[kAdvantageNet1] = &regrets1_;
    nets_[kStrategyNet] = &strategy_;
  }

  /// One iteration: `traversals` traversals for player 0, then for player 1; each phase's
  /// sampled regrets are added to that player's table after the phase (the "training" step).
  void iteration(int traversals) {
    ++t_;
    for (int p = 0; p < 2; ++p) {
      CollectingSink sink(W_, A_);
      scheduler_->run(make_job(game_, opts_, traversals, t_, p, 5), {nets_.data(), nets_.size()}, sink);
      TabularEvaluator& r = p == 0 ? regrets0_ : regrets1_;
      for (int i = 0; i < sink.advantage.size(); ++i) r.add(sink.advantage.input(i), sink.advantage.target(i));
      for (int i = 0; i < sink.strategy.size(); ++i) average_.add(sink.strategy.input(i), sink.strategy.target(i));
      nodes_ += sink.nodes;
    }
  }

  double nash_conv() const { return average_nash_conv(tree_, average_); }
  std::int64_t nodes() const { return nodes_; }

 private:
  TraversalOptions opts_;
  SmallTraversalGame<S> game_;
  GameTree tree_;
  int W_, A_;
  TabularEvaluator regrets0_, regrets1_, average_;
  UniformEvaluator strategy_;
  std::unique_ptr<Scheduler> scheduler_;
  std::array<Evaluator*, kNumNets> nets_{};
  int t_ = 0;
  std::int64_t nodes_ = 0;
};

}  // namespace

TEST_CASE("coroutine external sampling with tabular regrets reaches NashConv 0.05 on Kuhn") {
  register_builtin_schedulers();
  TabularMccfr<kuhn::State> solver({.kind = TraversalKind::kExternalSampling, .fallback = RmFallback::kUniform}, "interleaved",
                                   {{"window", 8}});
  int reached = -1;
  for (int it = 1; it <= 4000 && reached < 0; ++it) {
    solver.iteration(1);
    if (it % 100 == 0 && solver.nash_conv() <= 0.05) reached = it;
  }
  MESSAGE(fmt::format("Kuhn ES via coroutines: NashConv ≤ 0.05 after {} iterations ({} nodes)", reached, solver.nodes()));
  CHECK(reached > 0);
}

TEST_CASE("coroutine external sampling with tabular regrets falls below NashConv 0.5 on Leduc") {
  register_builtin_schedulers();
  TabularMccfr<leduc::State> solver({.kind = TraversalKind::kExternalSampling, .fallback = RmFallback::kUniform}, "interleaved",
                                    {{"window", 16}});
  double nc = 0;
  for (int it = 1; it <= 2000; ++it) solver.iteration(10);
  nc = solver.nash_conv();
  MESSAGE(fmt::format("Leduc ES via coroutines: NashConv {:.4f} after 2000 iterations × 10 traversals per player ({} nodes)", nc,
                      solver.nodes()));
  CHECK(nc < 0.5);
}

TEST_CASE("coroutine outcome sampling with tabular regrets falls steadily on Leduc") {
  register_builtin_schedulers();
  TabularMccfr<leduc::State> solver({.kind = TraversalKind::kOutcomeSampling,
                                     .epsilon = 0.6,
                                     .value_clip = 0,
                                     .unsampled = UnsampledRegret::kNegativeNodeValue,
                                     .max_nodes = 0,
                                     .opponent = OpponentPolicy::kNetwork,
                                     .fallback = RmFallback::kUniform},
                                    "interleaved", {{"window", 16}});
  std::vector<double> curve;
  int done = 0;
  for (int target : {250, 1000, 4000, 16000}) {
    while (done < target) {
      solver.iteration(10);
      ++done;
    }
    curve.push_back(solver.nash_conv());
  }
  MESSAGE(fmt::format(
      "Leduc OS via coroutines, NashConv at 250/1000/4000/16000 iterations × 10 traversals: {:.3f} {:.3f} {:.3f} {:.3f}",
      curve[0], curve[1], curve[2], curve[3]));
  for (std::size_t i = 1; i < curve.size(); ++i) CHECK(curve[i] < curve[i - 1]);
  CHECK(curve.back() < 0.8 * curve.front());
}
