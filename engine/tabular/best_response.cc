#include "engine/tabular/best_response.h"

#include <cmath>
#include <limits>
#include <vector>

namespace cfr {

namespace {

double on_policy(const TabularPolicy& pol, int n) {
  const GameTree& t = pol.tree();
  const auto& node = t.node(n);
  switch (node.kind) {
    case GameTree::Kind::kTerminal:
      return node.utility0;
    case GameTree::Kind::kChance: {
      double v = 0;
      for (const auto& e : t.edges(n)) v += e.prob * on_policy(pol, e.child);
      return v;
    }
    case GameTree::Kind::kDecision: {
      double v = 0;
      for (const auto& e : t.edges(n)) {
        const double p = pol.prob(node.infoset, e.action);
        if (p > 0) v += p * on_policy(pol, e.child);
      }
      return v;
    }
  }
  return 0;
}

// Memoised best response: a node's value depends only on the node, and the best action of an
// information set maximises the reach-weighted sum over its nodes (perfect recall makes the
// recursion well founded).
class BestResponse {
 public:
  BestResponse(const TabularPolicy& pol, int player)
      : pol_(pol),
        t_(pol.tree()),
        p_(player),
        reach_(static_cast<std::size_t>(t_.num_nodes()), 0.0),
        value_(static_cast<std::size_t>(t_.num_nodes()), kUnknown),
        best_(static_cast<std::size_t>(t_.num_infosets()), -1) {
    // Opponent-and-chance reach, top-down: children follow their parent in preorder.
    reach_[0] = 1.0;
    for (int n = 0; n < t_.num_nodes(); ++n) {
      const auto& node = t_.node(n);
      for (const auto& e : t_.edges(n)) {
        double f = 1.0;
        if (node.kind == GameTree::Kind::kChance)
          f = e.prob;
        else if (node.player != p_)
          f = pol_.prob(node.infoset, e.action);
        reach_[static_cast<std::size_t>(e.child)] = reach_[static_cast<std::size_t>(n)] * f;
      }
    }
  }

  double value(int n) {
    double& memo = value_[static_cast<std::size_t>(n)];
    if (!std::isnan(memo)) return memo;
    const auto& node = t_.node(n);
    double v = 0;
    switch (node.kind) {
      case GameTree::Kind::kTerminal:
        v = p_ == 0 ? node.utility0 : -node.utility0;
        break;
      case GameTree::Kind::kChance:
        for (const auto& e : t_.edges(n)) v += e.prob * value(e.child);
        break;
      case GameTree::Kind::kDecision:
        if (node.player == p_) {
          const int a = best_action(node.infoset);
          for (const auto& e : t_.edges(n))
            if (e.action == a) v = value(e.child);
        } else {
          for (const auto& e : t_.edges(n)) {
            const double q = pol_.prob(node.infoset, e.action);
            if (q > 0) v += q * value(e.child);
          }
        }
        break;
    }
    memo = v;
    return v;
  }

 private:
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

  int best_action(int infoset) {
    int& b = best_[static_cast<std::size_t>(infoset)];
    if (b >= 0) return b;
    const auto& info = t_.infoset(infoset);
    double best_v = -std::numeric_limits<double>::infinity();
    for (ActionMask m = info.legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      double v = 0;
      for (const int h : info.nodes)
        for (const auto& e : t_.edges(h))
          if (e.action == a) v += reach_[static_cast<std::size_t>(h)] * value(e.child);
      if (v > best_v + 1e-12) best_v = v, b = a;  // ties → the lowest action id
    }
    return b;
  }

  const TabularPolicy& pol_;
  const GameTree& t_;
  int p_;
  std::vector<double> reach_;
  std::vector<double> value_;
  std::vector<int> best_;
};

}  // namespace

double expected_value(const TabularPolicy& policy) { return on_policy(policy, 0); }

double best_response_value(const TabularPolicy& policy, int player) {
  CFR_CHECK(player == 0 || player == 1, "player {}", player);
  BestResponse br(policy, player);
  return br.value(0);
}

ExploitabilityReport exploitability(const TabularPolicy& policy) {
  policy.validate();
  ExploitabilityReport r;
  const double v0 = expected_value(policy);
  r.on_policy_value = {v0, -v0};
  for (int p = 0; p < 2; ++p) r.br_value[static_cast<std::size_t>(p)] = best_response_value(policy, p);
  r.nash_conv = r.br_value[0] - r.on_policy_value[0] + r.br_value[1] - r.on_policy_value[1];
  r.exploitability = r.nash_conv / 2;
  return r;
}

}  // namespace cfr
