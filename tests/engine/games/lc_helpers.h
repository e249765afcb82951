#pragma once
// Builds Lost Cities states with chosen hands and deck tops for hand-built test cases.
#include <algorithm>
#include <vector>

#include "engine/games/lost_cities.h"

namespace cfr::lc::testing {

/// Card with a face value (numeric) — for the default rules face f is rank f − 1.
inline Card num(int color, int rank) { return Card::make(color, rank); }
inline Card wager(int color) { return Card::make(color, 0); }

/// A deal where player 0 holds hand0 and player 1 hand1 (slot order), the deck's next cards (top
/// first) are deck_top, and every other card lies below them in id order.
inline State deal_with(const Rules& r, const std::vector<Card>& hand0, const std::vector<Card>& hand1,
                       const std::vector<Card>& deck_top = {}) {
  std::vector<int> pool;  // every card id of the rules' multiset
  for (int c = 0; c < r.n_colors; ++c) {
    for (int w = 0; w < r.n_handshakes; ++w) pool.push_back(card_id(r, Card::make(c, 0)));
    for (int k = 1; k <= r.n_ranks; ++k) pool.push_back(card_id(r, Card::make(c, k)));
  }
  auto take = [&](Card c) {
    auto it = std::find(pool.begin(), pool.end(), card_id(r, c));
    if (it == pool.end()) throw std::logic_error("deal_with: card used twice");
    pool.erase(it);
    return card_id(r, c);
  };
  std::vector<int> top_first;
  for (std::size_t i = 0; i < hand0.size(); ++i) {
    top_first.push_back(take(hand0[i]));
    top_first.push_back(take(hand1[i]));
  }
  for (Card c : deck_top) top_first.push_back(take(c));
  std::vector<int> deck(pool.begin(), pool.end());  // bottom
  deck.insert(deck.end(), top_first.rbegin(), top_first.rend());
  return State::from_deck(r, deck);
}

}  // namespace cfr::lc::testing
