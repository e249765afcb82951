#pragma once
// The full game tree of an enumerable game, flattened into arrays once, so that exact solvers and
// best responses run over plain indices instead of re-playing states.
//
// Nodes are stored in depth-first preorder (root = 0). Each information set lists its nodes and
// its legal actions; a policy or a regret table is a dense array of num_infosets ×
// num_distinct_actions doubles indexed by (infoset, action id), the layout of policy files.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/game.h"

namespace cfr {

class GameTree {
 public:
  enum class Kind : std::uint8_t { kChance, kDecision, kTerminal };

  struct Node {
    Kind kind = Kind::kTerminal;
    std::int8_t player = -1;  // 0/1 at decisions
    std::int32_t infoset = -1;
    std::int32_t first_edge = 0;
    std::int32_t num_edges = 0;
    double utility0 = 0.0;  // terminal utility of player 0 (zero-sum)
  };
  struct Edge {
    std::int32_t action = 0;
    std::int32_t child = 0;
    double prob = 0.0;  // chance probability (decision edges: 0)
  };
  struct Infoset {
    std::string key;
    int player = 0;
    ActionMask legal = 0;
    std::vector<int> nodes;
  };

  /// Enumerates every state reachable from S::initial(). Throws CheckError if two nodes of one
  /// information set disagree on their player or legal actions.
  template <EnumerableGame S>
  static GameTree build(std::string game_name) {
    GameTree t;
    t.game_ = std::move(game_name);
    const S root = S::initial();
    t.num_actions_ = root.num_distinct_actions();
    t.encoding_width_ = root.info_state_size();
    t.add<S>(root);
    return t;
  }

  const std::string& game() const noexcept { return game_; }
  int num_distinct_actions() const noexcept { return num_actions_; }
  int num_nodes() const noexcept { return static_cast<int>(nodes_.size()); }
  int num_infosets() const noexcept { return static_cast<int>(infosets_.size()); }
  int num_infosets(int player) const noexcept;
  int num_decision_nodes() const noexcept;
  const Node& node(int i) const noexcept { return nodes_[static_cast<std::size_t>(i)]; }
  std::span<const Edge> edges(int i) const noexcept {
    const Node& n = nodes_[static_cast<std::size_t>(i)];
    return {edges_.data() + n.first_edge, static_cast<std::size_t>(n.num_edges)};
  }
  const Infoset& infoset(int i) const noexcept { return infosets_[static_cast<std::size_t>(i)]; }
  /// The information-state encoding of infoset i (what networks see), encoding_width() floats.
  const float* infoset_encoding(int i) const noexcept {
    return encodings_.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(encoding_width_);
  }
  int encoding_width() const noexcept { return encoding_width_; }
  /// Index of an information-set key, or −1.
  int find_infoset(const std::string& key) const;
  /// Size of a dense (infoset × action) table.
  std::size_t table_size() const noexcept { return infosets_.size() * static_cast<std::size_t>(num_actions_); }

 private:
  template <EnumerableGame S>
  int add(const S& s) {
    const int id = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    Node n;
    std::vector<Edge> out;
    if (s.is_terminal()) {
      n.kind = Kind::kTerminal;
      n.utility0 = s.returns(0);
      CFR_CHECK(s.returns(1) == -n.utility0, "game is not zero-sum at a terminal");
    } else if (s.is_chance_node()) {
      n.kind = Kind::kChance;
      ChanceOutcome buf[kMaxChanceOutcomes];
      const int k = s.chance_outcomes(buf);
      for (int i = 0; i < k; ++i) out.push_back({buf[i].action, 0, buf[i].prob});
    } else {
      n.kind = Kind::kDecision;
      n.player = static_cast<std::int8_t>(s.current_player());
      const ActionMask legal = s.legal_mask();
      const int before = num_infosets();
      n.infoset = intern(s.info_state_key(n.player), n.player, legal);
      if (num_infosets() > before) {
        encodings_.resize(encodings_.size() + static_cast<std::size_t>(encoding_width_));
        s.encode_info_state(n.player,
                            std::span<float>(encodings_.data() + encodings_.size() - static_cast<std::size_t>(encoding_width_),
                                             static_cast<std::size_t>(encoding_width_)));
      }
      infosets_[static_cast<std::size_t>(n.infoset)].nodes.push_back(id);
      for (ActionMask m = legal; m != 0; m &= m - 1) out.push_back({std::countr_zero(m), 0, 0.0});
    }
    for (Edge& e : out) {
      S child = s;
      child.apply_action(e.action);
      e.child = add<S>(child);
    }
    n.first_edge = static_cast<std::int32_t>(edges_.size());
    n.num_edges = static_cast<std::int32_t>(out.size());
    edges_.insert(edges_.end(), out.begin(), out.end());
    nodes_[static_cast<std::size_t>(id)] = n;
    return id;
  }

  int intern(const std::string& key, int player, ActionMask legal);

  std::string game_;
  int num_actions_ = 0;
  int encoding_width_ = 0;
  std::vector<float> encodings_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::vector<Infoset> infosets_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace cfr
