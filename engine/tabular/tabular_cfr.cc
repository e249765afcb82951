#include "engine/tabular/tabular_cfr.h"

#include <algorithm>

#include <fmt/format.h>

namespace cfr {

TabularAlgo parse_tabular_algo(std::string_view name) {
  if (name == "cfr") return TabularAlgo::kCfr;
  if (name == "cfr+") return TabularAlgo::kCfrPlus;
  if (name == "lcfr") return TabularAlgo::kLinearCfr;
  if (name == "es-mccfr") return TabularAlgo::kExternalSampling;
  if (name == "os-mccfr") return TabularAlgo::kOutcomeSampling;
  throw InputError(fmt::format("unknown algorithm '{}'; valid: cfr, cfr+, lcfr, es-mccfr, os-mccfr", name));
}

std::string_view to_string(TabularAlgo a) {
  switch (a) {
    case TabularAlgo::kCfr:
      return "cfr";
    case TabularAlgo::kCfrPlus:
      return "cfr+";
    case TabularAlgo::kLinearCfr:
      return "lcfr";
    case TabularAlgo::kExternalSampling:
      return "es-mccfr";
    case TabularAlgo::kOutcomeSampling:
      return "os-mccfr";
  }
  return "?";
}

namespace {

// The chance edge selected by a uniform u in [0, 1) (the last edge absorbs rounding).
const GameTree::Edge& sample_chance_edge(std::span<const GameTree::Edge> edges, double u) noexcept {
  for (const auto& e : edges) {
    if (u < e.prob) return e;
    u -= e.prob;
  }
  return edges.back();
}

}  // namespace

TabularSolver::TabularSolver(const GameTree& tree, const TabularOptions& opts)
    : tree_(tree),
      opts_(opts),
      A_(tree.num_distinct_actions()),
      regrets_(tree.table_size(), 0.0),
      cumulative_(tree.table_size(), 0.0),
      current_(tree.table_size(), 0.0),
      rng_(opts.seed) {
  CFR_CHECK(A_ <= kMaxActionsAnyGame, "{} actions", A_);
  if (opts.algo == TabularAlgo::kOutcomeSampling)
    CFR_CHECK(opts.os_epsilon > 0 && opts.os_epsilon <= 1, "os_epsilon {} not in (0, 1]", opts.os_epsilon);
  refresh_current(0);
  refresh_current(1);
}

void TabularSolver::regret_matching(int infoset, double* out) const {
  const ActionMask legal = tree_.infoset(infoset).legal;
  double sum = 0;
  for (ActionMask m = legal; m != 0; m &= m - 1) sum += std::max(0.0, regrets_[at(infoset, std::countr_zero(m))]);
  for (int a = 0; a < A_; ++a) out[a] = 0.0;
  if (sum > 0) {
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      out[a] = std::max(0.0, regrets_[at(infoset, a)]) / sum;
    }
  } else {
    for (ActionMask m = legal; m != 0; m &= m - 1) out[std::countr_zero(m)] = 1.0 / mask_count(legal);
  }
}

void TabularSolver::refresh_current(int player) {
  for (int i = 0; i < tree_.num_infosets(); ++i)
    if (tree_.infoset(i).player == player) regret_matching(i, &current_[at(i, 0)]);
}

double TabularSolver::cfr_walk(int n, int p, double reach_p, double reach_o, double regret_w, double avg_w) {
  ++nodes_;
  const auto& node = tree_.node(n);
  const auto edges = tree_.edges(n);
  switch (node.kind) {
    case GameTree::Kind::kTerminal:
      return p == 0 ? node.utility0 : -node.utility0;
    case GameTree::Kind::kChance: {
      double v = 0;
      for (const auto& e : edges) v += e.prob * cfr_walk(e.child, p, reach_p, reach_o * e.prob, regret_w, avg_w);
      return v;
    }
    case GameTree::Kind::kDecision:
      break;
  }
  // Prune only when both players' reaches vanish: a subtree the opponent never enters still
  // receives p's average-policy contributions (weighted by p's own reach).
  if (reach_p == 0.0 && reach_o == 0.0) return 0.0;
  const int I = node.infoset;
  const double* sigma = &current_[at(I, 0)];
  if (node.player != p) {
    double v = 0;
    for (const auto& e : edges) {
      const double s = sigma[e.action];
      v += s * cfr_walk(e.child, p, reach_p, reach_o * s, regret_w, avg_w);
    }
    return v;
  }
  double va[kMaxActionsAnyGame];
  double v = 0;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const double s = sigma[edges[k].action];
    va[k] = cfr_walk(edges[k].child, p, reach_p * s, reach_o, regret_w, avg_w);
    v += s * va[k];
  }
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const int a = edges[k].action;
    regrets_[at(I, a)] += regret_w * reach_o * (va[k] - v);
    cumulative_[at(I, a)] += avg_w * reach_p * sigma[a];
  }
  return v;
}

double TabularSolver::es_walk(int n, int p) {
  ++nodes_;
  const auto& node = tree_.node(n);
  const auto edges = tree_.edges(n);
  switch (node.kind) {
    case GameTree::Kind::kTerminal:
      return p == 0 ? node.utility0 : -node.utility0;
    case GameTree::Kind::kChance:
      return es_walk(sample_chance_edge(edges, rng_.uniform()).child, p);
    case GameTree::Kind::kDecision:
      break;
  }
  const int I = node.infoset;
  double sigma[kMaxActionsAnyGame];
  regret_matching(I, sigma);
  if (node.player != p) {
    for (const auto& e : edges) cumulative_[at(I, e.action)] += sigma[e.action];
    double u = rng_.uniform();
    for (const auto& e : edges) {
      if (u < sigma[e.action]) return es_walk(e.child, p);
      u -= sigma[e.action];
    }
    for (auto it = edges.rbegin(); it != edges.rend(); ++it)
      if (sigma[it->action] > 0) return es_walk(it->child, p);
    return es_walk(edges.back().child, p);
  }
  double va[kMaxActionsAnyGame];
  double v = 0;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    va[k] = es_walk(edges[k].child, p);
    v += sigma[edges[k].action] * va[k];
  }
  for (std::size_t k = 0; k < edges.size(); ++k) regrets_[at(I, edges[k].action)] += va[k] - v;
  return v;
}

double TabularSolver::os_walk(int n, int p, double my_reach, double opp_reach, double sample_reach) {
  ++nodes_;
  const auto& node = tree_.node(n);
  const auto edges = tree_.edges(n);
  switch (node.kind) {
    case GameTree::Kind::kTerminal:
      return p == 0 ? node.utility0 : -node.utility0;
    case GameTree::Kind::kChance: {
      const GameTree::Edge& e = sample_chance_edge(edges, rng_.uniform());
      return os_walk(e.child, p, my_reach, opp_reach * e.prob, sample_reach * e.prob);
    }
    case GameTree::Kind::kDecision:
      break;
  }
  const int I = node.infoset;
  double sigma[kMaxActionsAnyGame], sample[kMaxActionsAnyGame];
  regret_matching(I, sigma);
  const double eps = node.player == p ? opts_.os_epsilon : 0.0;
  const double unif = 1.0 / static_cast<double>(edges.size());
  for (const auto& e : edges) sample[e.action] = eps * unif + (1.0 - eps) * sigma[e.action];
  double u = rng_.uniform();
  std::size_t k = edges.size() - 1;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (u < sample[edges[i].action]) {
      k = i;
      break;
    }
    u -= sample[edges[i].action];
  }
  while (sample[edges[k].action] <= 0 && k > 0) --k;  // rounding at the end of the interval
  const int a = edges[k].action;
  const double child = node.player == p ? os_walk(edges[k].child, p, my_reach * sigma[a], opp_reach, sample_reach * sample[a])
                                        : os_walk(edges[k].child, p, my_reach, opp_reach * sigma[a], sample_reach * sample[a]);
  const double child_value = child / sample[a];  // importance-weighted value of the sampled action
  const double value = sigma[a] * child_value;
  if (node.player == p) {
    const double w = opp_reach / sample_reach;
    for (const auto& e : edges) {
      const double cf_action = (e.action == a ? child_value : 0.0) * w;
      regrets_[at(I, e.action)] += cf_action - value * w;
      cumulative_[at(I, e.action)] += my_reach * sigma[e.action] / sample_reach;
    }
  }
  return value;
}

void TabularSolver::run_iteration() {
  ++iteration_;
  const double t = iteration_;
  for (int p = 0; p < 2; ++p) {
    switch (opts_.algo) {
      case TabularAlgo::kCfr:
        cfr_walk(0, p, 1.0, 1.0, 1.0, 1.0);
        break;
      case TabularAlgo::kCfrPlus:
        cfr_walk(0, p, 1.0, 1.0, 1.0, t);
        for (int i = 0; i < tree_.num_infosets(); ++i)
          if (tree_.infoset(i).player == p)
            for (int a = 0; a < A_; ++a) regrets_[at(i, a)] = std::max(0.0, regrets_[at(i, a)]);
        break;
      case TabularAlgo::kLinearCfr:
        cfr_walk(0, p, 1.0, 1.0, t, t);
        break;
      case TabularAlgo::kExternalSampling:
        es_walk(0, p);
        break;
      case TabularAlgo::kOutcomeSampling:
        os_walk(0, p, 1.0, 1.0, 1.0);
        break;
    }
    refresh_current(p);
  }
}

TabularPolicy TabularSolver::average_policy() const {
  TabularPolicy pol(tree_);
  for (int i = 0; i < tree_.num_infosets(); ++i) {
    const ActionMask legal = tree_.infoset(i).legal;
    double sum = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) sum += cumulative_[at(i, std::countr_zero(m))];
    auto row = pol.row(i);
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      row[static_cast<std::size_t>(a)] = sum > 0 ? cumulative_[at(i, a)] / sum : 1.0 / mask_count(legal);
    }
  }
  return pol;
}

TabularPolicy TabularSolver::current_policy() const {
  TabularPolicy pol(tree_);
  for (int i = 0; i < tree_.num_infosets(); ++i) regret_matching(i, pol.row(i).data());
  return pol;
}

}  // namespace cfr
