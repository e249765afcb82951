#pragma once
// Information-set tree search over the decider's own turn (the search player's `sims=S`,
// docs/search.md "A tree over the turn"): the one home of its rule, generic over the game.
//
// The tree's nodes are the decider's information sets from the root to the end of its turn (the
// decisions it makes before any other player moves: in Lost Cities the card and then the draw),
// each with the network's probabilities as its prior. A simulation draws a deal consistent with
// what the decider has seen, takes a root action the caller schedules (below), descends the rest
// of the turn by PUCT, applies the actions, and leaves the tree where the turn ends, at the game's
// end or at a node not yet expanded (which the caller expands with the network's probabilities
// there); from there a rollout (the network for both sides, then the value network at its depth,
// as the flat search's) values the simulation, and every edge on its path adds that value. A node
// is entered only with the information state it was made for (its key, e.g. a hash of the
// decider's encoding): elsewhere the simulation leaves the tree there.
//
// The root: sequential halving over the network's k most probable moves, on common deals. The
// budget is split evenly between ⌈log2 k⌉ rounds and, within a round, between the moves still in;
// the j-th simulation through a root move draws deal j (the caller derives the deal and the
// rollout's random stream from j, as the flat search's deal j), so that the moves of a round
// compare on the same deals; after each round the better half by mean value (rounded up) stays.
// The choice: the last one left, if it is the network's first or its mean lead over the first on
// their common deals is above z standard errors (the flat search's paired test; 0: no test).
//
// Below the root, selection at a node: argmax over the legal actions of
// Q(a) + c·P(a)·√(N + V) / (1 + n(a) + v(a)), Q(a) the mean value of a's simulations (unvisited:
// the node's mean over all its simulations, or 0), P the prior, n(a) a's finished simulations,
// v(a) those in flight (a wave selects many before any returns: each counts as a visit for
// exploration, so that a wave spreads), N and V their sums; ties to the more probable, then the
// lower id.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/core/checksum.h"
#include "engine/core/game.h"
#include "engine/traversal/determinized_search.h"
#include "engine/traversal/traversal.h"

namespace cfr {

inline constexpr int kMaxTurnDepth = 8;  // decisions in one turn the tree follows, at most
inline constexpr int kNoNode = -1;

/// One step of a simulation's path: the node and the action taken there.
struct TurnEdge {
  int node = kNoNode;
  int action = -1;
};

class TurnTree {
 public:
  struct Node {
    std::uint64_t key = 0;
    ActionMask legal = 0;
    int visits = 0;    // finished simulations through the node
    int inflight = 0;  // simulations selected through it, not yet backed up
    double value_sum = 0;
    std::array<float, kMaxTraversalActions> prior{};
    std::array<int, kMaxTraversalActions> n{};
    std::array<int, kMaxTraversalActions> v{};
    std::array<double, kMaxTraversalActions> w{};
    std::array<int, kMaxTraversalActions> child{};
  };

  /// A new tree: the root (information-state key `key`) with the legal actions and their
  /// probabilities (`probs`: kMaxTraversalActions entries, 0 off `legal`).
  void reset(std::uint64_t key, ActionMask legal, const float* probs) {
    nodes_.clear();
    for (auto& d : root_deals_) d.clear();  // keeps their capacity: a player's trees are reused
    add(key, legal, probs);
  }

  /// Expands `parent`'s child through `action` (whose information-state key is `key`); returns it
  /// (the existing one when it is there already).
  int expand(int parent, int action, std::uint64_t key, ActionMask legal, const float* probs) {
    const int have = nodes_[static_cast<std::size_t>(parent)].child[static_cast<std::size_t>(action)];
    if (have != kNoNode) return have;
    const int id = add(key, legal, probs);
    nodes_[static_cast<std::size_t>(parent)].child[static_cast<std::size_t>(action)] = id;
    return id;
  }

  /// The child of `node` through `action` when it exists and was made for information state
  /// `key`; kNoNode otherwise.
  int child(int node, int action, std::uint64_t key) const {
    const int c = nodes_[static_cast<std::size_t>(node)].child[static_cast<std::size_t>(action)];
    return c != kNoNode && nodes_[static_cast<std::size_t>(c)].key == key ? c : kNoNode;
  }
  bool has_child(int node, int action) const {
    return nodes_[static_cast<std::size_t>(node)].child[static_cast<std::size_t>(action)] != kNoNode;
  }

  /// PUCT at `node` (above) with exploration constant c; counts the pick as in flight.
  int select(int node, double c) {
    Node& x = nodes_[static_cast<std::size_t>(node)];
    const double fpu = x.visits > 0 ? x.value_sum / x.visits : 0.0;
    const double root_n = std::sqrt(static_cast<double>(std::max(1, x.visits + x.inflight)));
    int best = -1;
    double best_score = 0;
    for (ActionMask m = x.legal; m != 0; m &= m - 1) {
      const auto a = static_cast<std::size_t>(std::countr_zero(m));
      const double q = x.n[a] > 0 ? x.w[a] / x.n[a] : fpu;
      const double score = q + c * x.prior[a] * root_n / (1.0 + x.n[a] + x.v[a]);
      if (best < 0 || score > best_score || (score == best_score && x.prior[a] > x.prior[static_cast<std::size_t>(best)])) {
        best = static_cast<int>(a);
        best_score = score;
      }
    }
    ++x.v[static_cast<std::size_t>(best)];
    ++x.inflight;
    return best;
  }

  /// The root action the caller scheduled, counted as in flight; returns the deal its simulation
  /// uses: the action's count of earlier simulations.
  int take_root(int action) {
    Node& x = nodes_.front();
    const auto a = static_cast<std::size_t>(action);
    const int deal = x.n[a] + x.v[a];
    ++x.v[a];
    ++x.inflight;
    return deal;
  }

  /// Root action a's mean value (0 unvisited).
  double mean(int a) const {
    const Node& x = nodes_.front();
    const auto u = static_cast<std::size_t>(a);
    return x.n[u] > 0 ? x.w[u] / x.n[u] : 0.0;
  }

  /// One round of sequential halving: `in` (root moves, most probable first) keeps its better half
  /// by mean value, rounded up (ties: the more probable), in its order.
  void halve(std::vector<int>& in) const {
    std::vector<int> ranked = in;
    std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) { return mean(a) > mean(b); });
    ranked.resize((ranked.size() + 1) / 2);
    std::erase_if(in, [&](int a) { return std::find(ranked.begin(), ranked.end(), a) == ranked.end(); });
  }

  /// A finished simulation: `value` (the decider's) to every edge of `path`; `deal` is the deal
  /// take_root() gave it.
  void backup(std::span<const TurnEdge> path, int deal, double value) {
    for (const TurnEdge& e : path) {
      Node& x = nodes_[static_cast<std::size_t>(e.node)];
      const auto a = static_cast<std::size_t>(e.action);
      --x.v[a];
      --x.inflight;
      ++x.n[a];
      ++x.visits;
      x.w[a] += value;
      x.value_sum += value;
    }
    auto& d = root_deals_[static_cast<std::size_t>(path.front().action)];
    if (d.size() <= static_cast<std::size_t>(deal)) d.resize(static_cast<std::size_t>(deal) + 1, std::nan(""));
    d[static_cast<std::size_t>(deal)] = value;
  }

  /// The root's choice (above): `last` the move the halving left, `first` the network's most probable.
  int choose(int last, int first, double z) const { return last == first || z <= 0 || paired_z(last, first) > z ? last : first; }

  /// Root action a's mean lead over b on the deals both were valued on, in standard errors of that
  /// mean: the flat search's paired test (SearchTally::paired_z) over their common deals.
  double paired_z(int a, int b) const {
    const auto& da = root_deals_[static_cast<std::size_t>(a)];
    const auto& db = root_deals_[static_cast<std::size_t>(b)];
    SearchTally t;
    for (std::size_t j = 0; j < std::min(da.size(), db.size()); ++j)
      if (!std::isnan(da[j]) && !std::isnan(db[j])) t.add_deal(std::array<double, 2>{db[j], da[j]});
    return t.paired_z(1);
  }

  const Node& node(int id) const { return nodes_[static_cast<std::size_t>(id)]; }
  int size() const noexcept { return static_cast<int>(nodes_.size()); }

 private:
  int add(std::uint64_t key, ActionMask legal, const float* probs) {
    Node& x = nodes_.emplace_back();
    x.key = key;
    x.legal = legal;
    std::copy_n(probs, kMaxTraversalActions, x.prior.begin());
    x.child.fill(kNoNode);
    return static_cast<int>(nodes_.size()) - 1;
  }

  std::vector<Node> nodes_;
  std::array<std::vector<double>, kMaxTraversalActions> root_deals_;  // root action → its value on deal j (NaN: none)
};

/// An information state's key: the hash of its encoding's bytes.
inline std::uint64_t encoding_key(std::span<const float> row) noexcept {
  return hash64(std::string_view(reinterpret_cast<const char*>(row.data()), row.size_bytes()));
}

}  // namespace cfr
