#include "apps/players/evaluation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/tabular/best_response.h"

namespace cfr {

namespace {

/// One forward of `net` over every information set of `tree` (inputs in infoset order):
/// num_infosets × num_distinct_actions outputs.
std::vector<float> evaluate_infosets(const GameTree& tree, Evaluator& net) {
  const int W = tree.encoding_width(), A = tree.num_distinct_actions(), n = tree.num_infosets();
  std::vector<float> in(static_cast<std::size_t>(n * W)), out(static_cast<std::size_t>(n * A));
  std::vector<ActionMask> legal(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::copy_n(tree.infoset_encoding(i), W, in.data() + static_cast<std::size_t>(i * W));
    legal[static_cast<std::size_t>(i)] = tree.infoset(i).legal;
  }
  net.evaluate(in, legal, out);
  return out;
}

}  // namespace

TabularPolicy strategy_policy(const GameTree& tree, Evaluator& strategy) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  const std::vector<float> out = evaluate_infosets(tree, strategy);
  TabularPolicy pol(tree);
  std::vector<float> probs(static_cast<std::size_t>(A));
  for (int i = 0; i < n; ++i) {
    masked_softmax(out.data() + static_cast<std::size_t>(i * A), tree.infoset(i).legal, A, probs.data());
    double sum = 0;
    for (int a = 0; a < A; ++a) sum += probs[static_cast<std::size_t>(a)];
    for (int a = 0; a < A; ++a) pol.row(i)[static_cast<std::size_t>(a)] = probs[static_cast<std::size_t>(a)] / sum;
  }
  return pol;
}

double advantage_fit_l1(const GameTree& tree, Evaluator& advantage, const ReservoirMemory& memory, int player, bool linear,
                        RmFallback fallback, double rm_epsilon) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  std::vector<double> weights;
  const std::vector<double> sums = sample_sums(tree, memory, linear, &weights);
  const std::vector<float> out = evaluate_infosets(tree, advantage);
  std::vector<float> mean(static_cast<std::size_t>(A)), p_net(static_cast<std::size_t>(A)), p_mean(static_cast<std::size_t>(A));
  double total = 0;
  int counted = 0;
  for (int i = 0; i < n; ++i) {
    const double w = weights[static_cast<std::size_t>(i)];
    if (tree.infoset(i).player != player || w <= 0) continue;
    const ActionMask legal = tree.infoset(i).legal;
    for (int a = 0; a < A; ++a)
      mean[static_cast<std::size_t>(a)] = static_cast<float>(sums[static_cast<std::size_t>(i * A + a)] / w);
    regret_matching(out.data() + static_cast<std::size_t>(i * A), legal, A, fallback, rm_epsilon, p_net.data());
    regret_matching(mean.data(), legal, A, fallback, rm_epsilon, p_mean.data());
    for (int a = 0; a < A; ++a) total += std::abs(p_net[static_cast<std::size_t>(a)] - p_mean[static_cast<std::size_t>(a)]);
    ++counted;
  }
  return counted ? total / counted : 0.0;
}

void add_snapshot_policy(const GameTree& tree, Evaluator& advantage0, Evaluator& advantage1, double weight, RmFallback fallback,
                         double rm_epsilon, std::vector<double>& sums) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  sums.resize(tree.table_size(), 0.0);
  const std::vector<float> out[2] = {evaluate_infosets(tree, advantage0), evaluate_infosets(tree, advantage1)};
  std::vector<float> sigma(static_cast<std::size_t>(n * A));
  for (int i = 0; i < n; ++i) {
    const auto& I = tree.infoset(i);
    regret_matching(out[I.player].data() + static_cast<std::size_t>(i * A), I.legal, A, fallback, rm_epsilon,
                    sigma.data() + static_cast<std::size_t>(i * A));
  }
  // Each player's own reach at every node (preorder: a parent comes before its children), and at
  // every information set the reach of its first node (perfect recall: the same at all of them).
  std::vector<double> reach(static_cast<std::size_t>(2 * tree.num_nodes()), 0.0);
  std::vector<double> infoset_reach(static_cast<std::size_t>(n), -1.0);
  reach[0] = reach[1] = 1.0;
  for (int v = 0; v < tree.num_nodes(); ++v) {
    const auto& node = tree.node(v);
    const double r0 = reach[static_cast<std::size_t>(2 * v)], r1 = reach[static_cast<std::size_t>(2 * v + 1)];
    if (node.kind == GameTree::Kind::kDecision && infoset_reach[static_cast<std::size_t>(node.infoset)] < 0)
      infoset_reach[static_cast<std::size_t>(node.infoset)] = node.player == 0 ? r0 : r1;
    for (const auto& e : tree.edges(v)) {
      double c0 = r0, c1 = r1;
      if (node.kind == GameTree::Kind::kDecision) {
        const double p = sigma[static_cast<std::size_t>(node.infoset * A + e.action)];
        (node.player == 0 ? c0 : c1) *= p;
      }
      reach[static_cast<std::size_t>(2 * e.child)] = c0;
      reach[static_cast<std::size_t>(2 * e.child + 1)] = c1;
    }
  }
  for (int i = 0; i < n; ++i) {
    const double w = weight * std::max(0.0, infoset_reach[static_cast<std::size_t>(i)]);
    for (int a = 0; a < A; ++a) sums[static_cast<std::size_t>(i * A + a)] += w * sigma[static_cast<std::size_t>(i * A + a)];
  }
}

TabularPolicy snapshot_average_policy(const GameTree& tree, const std::vector<double>& sums) {
  const int A = tree.num_distinct_actions();
  TabularPolicy pol(tree);
  for (int i = 0; i < tree.num_infosets(); ++i) {
    const ActionMask legal = tree.infoset(i).legal;
    double total = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1)
      total += sums.empty() ? 0.0 : sums[static_cast<std::size_t>(i * A + std::countr_zero(m))];
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      pol.row(i)[static_cast<std::size_t>(a)] =
          total > 0 ? sums[static_cast<std::size_t>(i * A + a)] / total : 1.0 / mask_count(legal);
    }
  }
  return pol;
}

}  // namespace cfr
