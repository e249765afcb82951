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
  double mean_abs_error = 0;   // Σ reach(h) · mean over legal a of |q̂(h, a) − q(h, a)|, / Σ reach(h)
  double mean_abs_q = 0;       // the same weighting of |q(h, a)|: the scale the error compares with
  double regret_error = 0;     // the same weighting of |r̂(a) − r(a)|, regrets of the player to move from q̂ vs. q
  double mean_abs_regret = 0;  // the same weighting of |r(a)|: the scale regret_error compares with
};

namespace detail {

inline void evaluate_one(Evaluator& e, const float* in, ActionMask legal, float* out, int A) {
  e.evaluate(std::span<const float>(in, static_cast<std::size_t>(e.info().input_width)), std::span<const ActionMask>(&legal, 1),
             std::span<float>(out, static_cast<std::size_t>(A)));
}

template <EnumerableGame S, class Visit>
double profile_walk(const SmallTraversalGame<S>& game, Evaluator* const regret[2], const EscherOptions& o, Visit& visit,
                    const S& s, double reach) {
  if (s.is_terminal()) return s.returns(0);
  if (s.is_chance_node()) {
    ChanceOutcome out[kMaxChanceOutcomes];
    const int k = s.chance_outcomes(out);
    double v = 0;
    for (int i = 0; i < k; ++i) {
      S child = s;
      child.apply_action(out[i].action);
      v += out[i].prob * profile_walk(game, regret, o, visit, child, reach * out[i].prob);
    }
    return v;
  }
  const int p = s.current_player(), A = game.num_actions();
  const ActionMask legal = s.legal_mask();
  std::vector<float> in(static_cast<std::size_t>(game.input_width()));
  float adv[kMaxTraversalActions], sigma[kMaxTraversalActions];
  game.encode(s, p, in.data());
  evaluate_one(*regret[p], in.data(), legal, adv, A);
  regret_matching(adv, legal, A, o.fallback, o.rm_epsilon, sigma);
  double q[kMaxTraversalActions] = {};
  double v = 0;
  for (ActionMask m = legal; m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    S child = s;
    child.apply_action(a);
    q[a] = profile_walk(game, regret, o, visit, child, reach * sigma[a]);
    v += sigma[a] * q[a];
  }
  visit(s, legal, sigma, q, v, reach);
  return v;
}

}  // namespace detail

/// Walks every history of a small game under the profile regret matching on `regret0` and
/// `regret1` plays, and calls visit(state, legal, sigma, q, v, reach) at each decision with the
/// exact q(h, a) and v(h) for player 0 and the probability that the profile and chance reach h.
/// Returns player 0's value of the game.
template <EnumerableGame S, class Visit>
double walk_profile(const SmallTraversalGame<S>& game, Evaluator& regret0, Evaluator& regret1, const EscherOptions& o,
                    Visit&& visit) {
  Evaluator* const regret[2] = {&regret0, &regret1};
  return detail::profile_walk(game, regret, o, visit, S::initial(), 1.0);
}

/// The value network's error against the exact q of the profile regret matching on `regret0` and
/// `regret1` plays, weighted by how often that profile (and chance) reaches each history.
template <EnumerableGame S>
ValueError value_error(const SmallTraversalGame<S>& game, Evaluator& regret0, Evaluator& regret1, Evaluator& value,
                       const EscherOptions& o) {
  const int W = game.input_width(), A = game.num_actions();
  double weight = 0, err = 0, scale = 0, regret_err = 0, regret_scale = 0;
  std::vector<float> hist(static_cast<std::size_t>(2 * W));
  walk_profile(game, regret0, regret1, o,
               [&](const S& s, ActionMask legal, const float* sigma, const double* q, double v, double reach) {
                 float qhat[kMaxTraversalActions];
                 game.encode(s, 0, hist.data());
                 game.encode(s, 1, hist.data() + W);
                 detail::evaluate_one(value, hist.data(), legal, qhat, A);
                 double vhat = 0;
                 for (ActionMask m = legal; m != 0; m &= m - 1) vhat += sigma[std::countr_zero(m)] * qhat[std::countr_zero(m)];
                 const double side = s.current_player() == 0 ? 1.0 : -1.0, n = mask_count(legal);
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
               });
  if (weight <= 0) return {};
  return {err / weight, scale / weight, regret_err / weight, regret_scale / weight};
}

}  // namespace cfr
