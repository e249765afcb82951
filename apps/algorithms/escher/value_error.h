#pragma once
// How far ESCHER's history value network is from the exact q-values of the profile it is meant to
// evaluate, on games small enough to walk (Kuhn, Leduc): the diagnosis of what its regrets inherit.
// LibTorch-free: networks are reached through their evaluators.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/core/game.h"
#include "engine/traversal/escher.h"
#include "engine/traversal/traversal_games.h"
#include "sched/evaluator.h"

namespace cfr {

struct ValueError {
  double mean_abs_error = 0;  // Σ reach(h) · mean over legal a of |q̂(h, a) − q(h, a)|, / Σ reach(h)
  double mean_abs_q = 0;      // the same weighting of |q(h, a)|: the scale the error compares with
  double regret_error = 0;    // the same weighting of |r̂(a) − r(a)|, regrets of the player to move from q̂ vs. q
  double mean_abs_regret = 0; // the same weighting of |r(a)|: the scale regret_error compares with
};

namespace detail {

template <EnumerableGame S>
struct ValueWalk {
  const SmallTraversalGame<S>& game;
  Evaluator* regret[2];
  Evaluator& value;
  const EscherOptions& o;
  int W, A;
  double weight = 0, err = 0, scale = 0, regret_err = 0, regret_scale = 0;

  void eval(Evaluator& e, const float* in, ActionMask legal, float* out) {
    e.evaluate(std::span<const float>(in, static_cast<std::size_t>(e.info().input_width)), std::span<const ActionMask>(&legal, 1),
               std::span<float>(out, static_cast<std::size_t>(A)));
  }
  /// Player 0's exact value of s under the profile; accumulates the errors weighted by `reach`.
  double walk(const S& s, double reach) {
    if (s.is_terminal()) return s.returns(0);
    if (s.is_chance_node()) {
      ChanceOutcome out[kMaxChanceOutcomes];
      const int k = s.chance_outcomes(out);
      double v = 0;
      for (int i = 0; i < k; ++i) {
        S child = s;
        child.apply_action(out[i].action);
        v += out[i].prob * walk(child, reach * out[i].prob);
      }
      return v;
    }
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    std::vector<float> in(static_cast<std::size_t>(2 * W));
    float adv[kMaxTraversalActions], sigma[kMaxTraversalActions], qhat[kMaxTraversalActions];
    game.encode(s, p, in.data());
    eval(*regret[p], in.data(), legal, adv);
    regret_matching(adv, legal, A, o.fallback, o.rm_epsilon, sigma);
    game.encode(s, 0, in.data());
    game.encode(s, 1, in.data() + W);
    eval(value, in.data(), legal, qhat);
    double q[kMaxTraversalActions] = {};
    double v = 0, vhat = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      S child = s;
      child.apply_action(a);
      q[a] = walk(child, reach * sigma[a]);
      v += sigma[a] * q[a];
      vhat += sigma[a] * qhat[a];
    }
    const double side = p == 0 ? 1.0 : -1.0, n = mask_count(legal);
    double e = 0, sc = 0, re = 0, rs = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      e += std::abs(qhat[a] - q[a]);
      sc += std::abs(q[a]);
      re += std::abs(side * ((qhat[a] - vhat) - (q[a] - v)));
      rs += std::abs(q[a] - v);
    }
    weight += reach;
    err += reach * e / n;
    scale += reach * sc / n;
    regret_err += reach * re / n;
    regret_scale += reach * rs / n;
    return v;
  }
};

}  // namespace detail

/// The value network's error against the exact q of the profile regret matching on `regret0` and
/// `regret1` plays, weighted by how often that profile (and chance) reaches each history.
template <EnumerableGame S>
ValueError value_error(const SmallTraversalGame<S>& game, Evaluator& regret0, Evaluator& regret1, Evaluator& value,
                       const EscherOptions& o) {
  detail::ValueWalk<S> w{game, {&regret0, &regret1}, value, o, game.input_width(), game.num_actions()};
  (void)w.walk(S::initial(), 1.0);
  if (w.weight <= 0) return {};
  return {w.err / w.weight, w.scale / w.weight, w.regret_err / w.weight, w.regret_scale / w.weight};
}

}  // namespace cfr
