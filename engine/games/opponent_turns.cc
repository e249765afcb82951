#include "engine/games/opponent_turns.h"

#include <algorithm>
#include <array>
#include <bit>

namespace cfr::lc {

void OpponentTurns::record(const State& before, int action) {
  const int opp = 1 - seat_;
  if (before.is_terminal() || before.current_player() != opp) return;
  Move m{before};
  const Rules& r = before.rules();
  if (before.phase() == Phase::kCard) {
    m.card = before.hand_card(opp, action / 2);
    m.discard = (action & 1) != 0;
  } else {
    m.draw = true;
    m.action = action;
    m.from_deck = action == r.draw_deck_action();
    if (!m.from_deck) m.card = before.pile_top(action - r.draw_deck_action() - 1);
  }
  State after = before;
  after.apply_action(action);
  for (std::uint32_t k = after.known_mask(opp); k != 0; k &= k - 1)
    m.known_after[m.known_after_count++] = after.hand_card(opp, std::countr_zero(k));
  moves_.push_back(std::move(m));
}

namespace {

/// Marks, in hand h[0..n), one position for each card of `known` (a sub-multiset of h): true at a
/// marked position. False when a known card is not in h.
bool mark_known(std::span<const Card> h, std::span<const Card> known, std::array<bool, kMaxHandSize + 1>& marked) {
  marked.fill(false);
  for (const Card c : known) {
    std::size_t i = 0;
    while (i < h.size() && (marked[i] || h[i] != c)) ++i;
    if (i == h.size()) return false;
    marked[i] = true;
  }
  return true;
}

}  // namespace

bool OpponentTurns::rebuild(const State& deal, int max_moves, Rng& rng, std::vector<PastDecision>& out) const {
  out.clear();
  const int opp = 1 - seat_;
  if (deal.is_terminal() || deal.current_player() != seat_) return false;
  if (!moves_.empty() && moves_.back().before.move_count() >= deal.move_count()) return false;
  // h: the opponent's hand in the deal now; going back, the hand before each of its moves.
  std::array<Card, kMaxHandSize + 1> h{};
  std::size_t n = static_cast<std::size_t>(deal.hand_size(opp));
  for (std::size_t i = 0; i < n; ++i) h[i] = deal.hand_card(opp, static_cast<int>(i));
  std::array<bool, kMaxHandSize + 1> marked{};
  std::array<Card, kMaxHandSize> known{}, unknown{};
  const int first = std::max(0, moves() - std::max(0, max_moves));
  for (int k = moves() - 1; k >= first; --k) {
    const Move& m = moves_[static_cast<std::size_t>(k)];
    if (m.draw) {  // h is the hand after the draw: take the drawn card out
      std::size_t at = n;
      if (m.from_deck) {  // one of the cards unknown after it, uniformly
        if (!mark_known(std::span<const Card>(h.data(), n), std::span<const Card>(m.known_after.data(), m.known_after_count),
                        marked))
          return out.clear(), false;
        const auto free =
            static_cast<std::uint32_t>(std::count(marked.begin(), marked.begin() + static_cast<std::ptrdiff_t>(n), false));
        if (free == 0) return out.clear(), false;
        std::uint32_t pick = rng.below(free);
        for (at = 0; at < n; ++at)
          if (!marked[at] && pick-- == 0) break;
      } else {
        at = static_cast<std::size_t>(std::find(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(n), m.card) - h.begin());
      }
      if (at >= n) return out.clear(), false;
      h[at] = h[--n];
    } else {  // h is the hand after the card left it: put it back
      if (n >= h.size()) return out.clear(), false;
      h[n++] = m.card;
    }
    // h is now the hand at m.before: its known cards stay in their slots, the rest fill the others.
    const State& b = m.before;
    if (static_cast<int>(n) != b.hand_size(opp)) return out.clear(), false;
    std::size_t n_known = 0;
    for (std::uint32_t km = b.known_mask(opp); km != 0; km &= km - 1) known[n_known++] = b.hand_card(opp, std::countr_zero(km));
    if (!mark_known(std::span<const Card>(h.data(), n), std::span<const Card>(known.data(), n_known), marked))
      return out.clear(), false;
    std::size_t n_unknown = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (!marked[i]) unknown[n_unknown++] = h[i];
    for (std::size_t i = n_unknown; i > 1; --i) std::swap(unknown[i - 1], unknown[rng.below(static_cast<std::uint32_t>(i))]);
    PastDecision d{b, 0};
    d.state.set_unknown_hand(opp, std::span<const Card>(unknown.data(), n_unknown));
    if (m.draw) {
      d.seen = ActionMask{1} << m.action;
    } else {
      for (int i = 0; i < d.state.hand_size(opp); ++i)
        if (d.state.hand_card(opp, i) == m.card) d.seen |= ActionMask{1} << (2 * i + (m.discard ? 1 : 0));
    }
    out.push_back(std::move(d));
  }
  return true;
}

}  // namespace cfr::lc
