#include "engine/tabular/game_tree.h"

namespace cfr {

int GameTree::num_infosets(int player) const noexcept {
  int n = 0;
  for (const auto& i : infosets_) n += i.player == player ? 1 : 0;
  return n;
}

int GameTree::num_decision_nodes() const noexcept {
  int n = 0;
  for (const auto& x : nodes_) n += x.kind == Kind::kDecision ? 1 : 0;
  return n;
}

int GameTree::find_infoset(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

int GameTree::intern(const std::string& key, int player, ActionMask legal) {
  const auto [it, inserted] = index_.try_emplace(key, static_cast<int>(infosets_.size()));
  if (inserted) {
    infosets_.push_back(Infoset{key, player, legal, {}});
  } else {
    const Infoset& i = infosets_[static_cast<std::size_t>(it->second)];
    CFR_CHECK(i.player == player && i.legal == legal, "information set '{}' has nodes with different players or legal actions",
              key);
  }
  return it->second;
}

}  // namespace cfr
