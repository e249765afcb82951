// ESCHER's traversals (engine/traversal/escher.h) proven without networks: with tabular regrets
// and the exact history values of the current profile they are tabular ESCHER, measured by exact
// NashConv; the value trajectories' targets average to the exact q-values.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "apps/algorithms/deep_cfr/escher_value_error.h"
#include "engine/tabular/best_response.h"
#include "engine/traversal/escher.h"
#include "tests/sched/helpers.h"

using namespace cfr;
using namespace cfr::testing;

namespace {

template <class S>
class TabularEscher {
 public:
  explicit TabularEscher(const EscherOptions& opts)
      : opts_(opts),
        tree_(GameTree::build<S>(std::string(S::kName))),
        W_(game_.input_width()),
        A_(game_.num_actions()),
        regrets0_(W_, A_),
        regrets1_(W_, A_),
        average_(W_, A_),
        strategy_(W_, A_),
        scheduler_(make_scheduler("interleaved", {{"window", 16}})) {
    nets_[kAdvantageNet0] = &regrets0_;
    nets_[kAdvantageNet1] = &regrets1_;
    nets_[kStrategyNet] = &strategy_;
  }

  /// One iteration: the exact q of the current profile, then both players' regret phases (from
  /// the same profile), then their samples added to the tables.
  void iteration(int traversals) {
    ++t_;
    exact_values();
    CollectingSink s0(W_, A_), s1(W_, A_);
    run(s0, traversals, 0);
    run(s1, traversals, 1);
    for (int p = 0; p < 2; ++p) {
      const CollectingSink& sink = p == 0 ? s0 : s1;
      TabularEvaluator& r = p == 0 ? regrets0_ : regrets1_;
      for (int i = 0; i < sink.advantage.size(); ++i) r.add(sink.advantage.input(i), sink.advantage.target(i));
      for (int i = 0; i < sink.strategy.size(); ++i) average_.add(sink.strategy.input(i), sink.strategy.target(i));
    }
  }

  /// The value trajectories of the current profile: their targets averaged per (history, action),
  /// against the exact q. Returns the sample-weighted mean absolute error.
  double value_error(int trajectories, EscherValueTarget target, double epsilon) {
    exact_values();
    EscherOptions o = opts_;
    o.value_target = target;
    o.value_epsilon = epsilon;
    TraversalJob job{.iteration = t_,
                     .traverser = 0,
                     .num_traversals = trajectories,
                     .seed = 11,
                     .input_width = 2 * W_,
                     .output_width = A_,
                     .start = [&](TraversalContext& ctx) { return escher_value_traversal(ctx, game_, o); }};
    CollectingSink sink(2 * W_, A_);
    scheduler_->run(job, {nets_.data(), nets_.size()}, sink);
    TabularEvaluator sums(2 * W_, A_), counts(2 * W_, A_);
    std::vector<float> one(static_cast<std::size_t>(A_));
    for (int i = 0; i < sink.advantage.size(); ++i) {
      const ActionMask m = sink.advantage.masks[static_cast<std::size_t>(i)];
      REQUIRE(mask_count(m) == 1);  // a value sample trains the sampled action only
      std::fill(one.begin(), one.end(), 0.0F);
      one[static_cast<std::size_t>(std::countr_zero(m))] = 1.0F;
      sums.add(sink.advantage.input(i), sink.advantage.target(i));
      counts.add(sink.advantage.input(i), one.data());
    }
    double err = 0, n = 0;
    for (int i = 0; i < sink.advantage.size(); ++i) {
      const float* in = sink.advantage.input(i);
      const int a = std::countr_zero(sink.advantage.masks[static_cast<std::size_t>(i)]);
      const double* exact = values_->find(in);
      REQUIRE(exact != nullptr);
      err += std::abs(sums.find(in)[a] / counts.find(in)[a] - exact[a]);
      n += 1;
    }
    return err / n;
  }

  double nash_conv() const { return average_nash_conv(tree_, average_); }

 private:
  void run(CollectingSink& sink, int traversals, int p) {
    TraversalJob job{.iteration = t_,
                     .traverser = p,
                     .num_traversals = traversals,
                     .seed = 5,
                     .input_width = W_,
                     .output_width = A_,
                     .start = [this](TraversalContext& ctx) { return escher_regret_traversal(ctx, game_, opts_); }};
    scheduler_->run(job, {nets_.data(), nets_.size()}, sink);
  }

  /// values_: q(h, a) for player 0 under the current profile (regret matching on the tables), for
  /// every history (its key: both players' encodings).
  void exact_values() {
    values_ = std::make_unique<TabularEvaluator>(2 * W_, A_);
    nets_[kValueNet] = values_.get();
    std::vector<float> hist(static_cast<std::size_t>(2 * W_)), row(static_cast<std::size_t>(A_));
    walk_profile(game_, regrets0_, regrets1_, opts_,
                 [&](const S& s, ActionMask legal, const float*, const double* q, double, double) {
                   game_.encode(s, 0, hist.data());
                   game_.encode(s, 1, hist.data() + W_);
                   for (int a = 0; a < A_; ++a) row[static_cast<std::size_t>(a)] = static_cast<float>(q[a]);
                   // Histories that differ only in suits share an encoding (Leduc encodes ranks): their values agree.
                   if (const double* seen = values_->find(hist.data())) {
                     for (ActionMask m = legal; m != 0; m &= m - 1)
                       CHECK(std::abs(seen[std::countr_zero(m)] - q[std::countr_zero(m)]) < 1e-4);
                   } else {
                     values_->add(hist.data(), row.data());
                   }
                 });
  }

  EscherOptions opts_;
  SmallTraversalGame<S> game_;
  GameTree tree_;
  int W_, A_;
  TabularEvaluator regrets0_, regrets1_, average_;
  UniformEvaluator strategy_;
  std::unique_ptr<TabularEvaluator> values_;
  std::unique_ptr<Scheduler> scheduler_;
  std::array<Evaluator*, kNumEscherNets> nets_{};
  int t_ = 0;
};

}  // namespace

TEST_CASE("ESCHER with tabular regrets and exact history values reaches NashConv 0.05 on Kuhn") {
  register_builtin_schedulers();
  TabularEscher<kuhn::State> solver({.max_nodes = 0, .fallback = RmFallback::kUniform});
  int reached = -1;
  for (int it = 1; it <= 3000 && reached < 0; ++it) {
    solver.iteration(4);
    if (it % 50 == 0 && solver.nash_conv() <= 0.05) reached = it;
  }
  MESSAGE(fmt::format("Kuhn tabular ESCHER: NashConv ≤ 0.05 after {} iterations × 4 traversals per player", reached));
  CHECK(reached > 0);
}

TEST_CASE("ESCHER with tabular regrets and exact history values falls steadily on Leduc") {
  register_builtin_schedulers();
  TabularEscher<leduc::State> solver({.max_nodes = 0, .fallback = RmFallback::kUniform});
  std::vector<double> curve;
  int done = 0;
  for (int target : {200, 400, 800, 1600}) {
    while (done < target) {
      solver.iteration(20);
      ++done;
    }
    curve.push_back(solver.nash_conv());
  }
  MESSAGE(
      fmt::format("Leduc tabular ESCHER, NashConv at 200/400/800/1600 iterations × 20 traversals: {:.3f} {:.3f} {:.3f} {:.3f}",
                  curve[0], curve[1], curve[2], curve[3]));
  for (std::size_t i = 1; i < curve.size(); ++i) CHECK(curve[i] < curve[i - 1]);
  CHECK(curve.back() < 0.4);
}

TEST_CASE("ESCHER's value trajectories: importance-weighted targets average to the exact q, plain returns to within ε") {
  register_builtin_schedulers();
  TabularEscher<kuhn::State> solver({.max_nodes = 0, .fallback = RmFallback::kUniform});
  for (int it = 1; it <= 30; ++it) solver.iteration(4);  // a profile far from uniform
  const double iw = solver.value_error(200000, EscherValueTarget::kImportanceWeighted, 0.3);
  const double ret_small = solver.value_error(200000, EscherValueTarget::kReturn, 0.02);
  const double ret_large = solver.value_error(200000, EscherValueTarget::kReturn, 0.6);
  MESSAGE(
      fmt::format("Kuhn value targets, mean |average - exact q|: importance-weighted (ε 0.3) {:.4f}, returns (ε 0.02) {:.4f}, "
                  "returns (ε 0.6) {:.4f}",
                  iw, ret_small, ret_large));
  CHECK(iw < 0.03);
  CHECK(ret_small < 0.03);
  CHECK(ret_large > 2 * ret_small);  // the bias of plain returns grows with the exploration
}
