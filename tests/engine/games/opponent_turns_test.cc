// The search's belief (engine/games/opponent_turns.h): State::set_unknown_hand, and the
// opponent's past decisions rebuilt for a deal of the present.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"
#include "engine/games/opponent_turns.h"

using namespace cfr::lc;
using cfr::Rng;

namespace {

// A random playout policy that draws from a pile two times in three when it can (many known cards).
int pile_loving_action(const State& s, Rng& rng) {
  const cfr::ActionMask m = s.legal_mask();
  if (s.phase() == Phase::kDraw) {
    const cfr::ActionMask piles = m & ~(cfr::ActionMask{1} << s.rules().draw_deck_action());
    if (piles != 0 && rng.below(3) != 0)
      return cfr::mask_nth(piles, static_cast<int>(rng.below(static_cast<std::uint32_t>(cfr::mask_count(piles)))));
  }
  return cfr::mask_nth(m, static_cast<int>(rng.below(static_cast<std::uint32_t>(cfr::mask_count(m)))));
}

std::vector<int> sorted_hand(const State& s, int p) {
  std::vector<int> h;
  for (int i = 0; i < s.hand_size(p); ++i) h.push_back(s.hand_card(p, i).v);
  std::sort(h.begin(), h.end());
  return h;
}

std::vector<int> known_cards(const State& s, int p) {
  std::vector<int> h;
  for (int i = 0; i < s.hand_size(p); ++i)
    if (s.hand_card_known(p, i)) h.push_back(s.hand_card(p, i).v);
  std::sort(h.begin(), h.end());
  return h;
}

// What `watcher` sees of s: its own hand in slot order, the table, the deck's size, the other
// player's hand size and known cards. (The encoding would also hold the mover's legal moves.)
bool same_view(const State& a, const State& b, int watcher) {
  const Rules& r = a.rules();
  if (a.deck_size() != b.deck_size() || a.phase() != b.phase() || a.current_player() != b.current_player() ||
      a.pending_color() != b.pending_color() || a.hand_size(1 - watcher) != b.hand_size(1 - watcher) ||
      known_cards(a, 1 - watcher) != known_cards(b, 1 - watcher) || a.hand_size(watcher) != b.hand_size(watcher))
    return false;
  for (int i = 0; i < a.hand_size(watcher); ++i)
    if (a.hand_card(watcher, i) != b.hand_card(watcher, i)) return false;
  for (int c = 0; c < r.n_colors; ++c) {
    if (a.pile_size(c) != b.pile_size(c)) return false;
    for (int i = 0; i < a.pile_size(c); ++i)
      if (a.pile_card(c, i) != b.pile_card(c, i)) return false;
    for (int p = 0; p < 2; ++p) {
      if (a.expedition_card_count(p, c) != b.expedition_card_count(p, c)) return false;
      for (int i = 0; i < a.expedition_card_count(p, c); ++i)
        if (a.expedition_card(p, c, i) != b.expedition_card(p, c, i)) return false;
    }
  }
  return true;
}

std::vector<float> encoding(const State& s, int observer) {
  const EncodingOptions o{.opponent_known_cards = true, .slot_cards = true};
  std::vector<float> v(static_cast<std::size_t>(encoding_size(s.rules(), o)));
  s.encode(observer, v, o);
  return v;
}

}  // namespace

TEST_CASE("set_unknown_hand replaces the unknown slots and keeps every card") {
  const Rules r;
  Rng play(5);
  State s = State::deal(r, 17);
  for (int i = 0; i < 40; ++i) s.apply_action(pile_loving_action(s, play));
  const int p = 1;
  std::vector<Card> unknown;
  for (int i = 0; i < s.hand_size(p); ++i)
    if (!s.hand_card_known(p, i)) unknown.push_back(s.hand_card(p, i));
  REQUIRE(unknown.size() >= 2);
  // The deck's bottom card and the hand's unknown cards but the first.
  std::vector<Card> fresh(unknown.begin() + 1, unknown.end());
  fresh.push_back(s.deck_card(0));
  State t = s;
  t.set_unknown_hand(p, fresh);
  t.check_invariants();
  int j = 0;
  for (int i = 0; i < t.hand_size(p); ++i) {
    CHECK(t.hand_card_known(p, i) == s.hand_card_known(p, i));
    CHECK(t.hand_card(p, i) == (s.hand_card_known(p, i) ? s.hand_card(p, i) : fresh[static_cast<std::size_t>(j++)]));
  }
  CHECK(t.deck_card(0) == unknown[0]);      // the card that left the hand took the new card's place
  CHECK(same_view(t, s, 1 - p));            // the same information set for the other player
  CHECK(encoding(t, p) != encoding(s, p));  // not for p
  // Wrong count; a card the other player holds.
  CHECK_THROWS_AS(t.set_unknown_hand(p, std::span<const Card>(fresh.data(), fresh.size() - 1)), cfr::CheckError);
  std::vector<Card> bad = fresh;
  bad[0] = s.hand_card(1 - p, 0);
  CHECK_THROWS_AS(t.set_unknown_hand(p, bad), cfr::CheckError);
}

TEST_CASE("the opponent's rebuilt decisions agree with everything the watcher saw") {
  const Rules r;
  int rebuilt = 0, truth_found = 0, truth_looked = 0;
  for (int game = 0; game < 12; ++game) {
    const int seat = game % 2, opp = 1 - seat;
    OpponentTurns turns;
    turns.reset(seat);
    std::vector<State> opp_before;  // the true states before each of the opponent's moves
    std::vector<int> opp_action;
    Rng play(100 + static_cast<std::uint64_t>(game));
    auto expert = make_bot("heuristic_expert", r);
    State s = State::deal(r, 1000 + static_cast<std::uint64_t>(game));
    for (int move = 0; !s.is_terminal(); ++move) {
      if (s.current_player() == seat && turns.moves() > 0) {
        // Any deal of the watcher's information set rebuilds, and agrees with what it saw.
        for (int d = 0; d < 3; ++d) {
          State deal = s;
          Rng deal_rng(7 * static_cast<std::uint64_t>(move) + static_cast<std::uint64_t>(d));
          if (d > 0) deal.resample_hidden(seat, deal_rng);
          std::vector<PastDecision> past;
          REQUIRE(turns.rebuild(deal, 8, deal_rng, past));
          REQUIRE(static_cast<int>(past.size()) == std::min(8, turns.moves()));
          for (std::size_t k = 0; k < past.size(); ++k) {
            const State& truth = opp_before[opp_before.size() - 1 - k];
            const State& x = past[k].state;
            x.check_invariants();
            CHECK(x.current_player() == opp);
            CHECK(x.move_count() == truth.move_count());
            CHECK(same_view(x, truth, seat));  // the watcher cannot tell them apart
            CHECK(known_cards(x, opp) == known_cards(truth, opp));
            CHECK(past[k].seen != 0);
            CHECK((past[k].seen & ~x.legal_mask()) == 0);  // the seen move is legal there
            const int a = opp_action[opp_action.size() - 1 - k];
            if (truth.phase() == Phase::kDraw) CHECK(past[k].seen == (cfr::ActionMask{1} << a));
            ++rebuilt;
          }
        }
        // From the true deal, the true hand before the opponent's last two moves is among the rebuilt ones.
        if (turns.moves() >= 2 && move % 5 == 0) {
          ++truth_looked;
          const State& truth = opp_before[opp_before.size() - 2];
          bool found = false;
          for (std::uint64_t t = 0; t < 200 && !found; ++t) {
            Rng rng(t);
            std::vector<PastDecision> past;
            REQUIRE(turns.rebuild(s, 2, rng, past));
            found = sorted_hand(past[1].state, opp) == sorted_hand(truth, opp);
          }
          truth_found += found ? 1 : 0;
        }
      }
      const int a = game < 6 ? pile_loving_action(s, play) : expert->choose_action(s, play);
      if (s.current_player() == opp) {
        opp_before.push_back(s);
        opp_action.push_back(a);
      }
      turns.record(s, a);
      s.apply_action(a);
    }
  }
  CHECK(rebuilt > 1000);
  CHECK(truth_looked > 20);
  CHECK(truth_found == truth_looked);
}

TEST_CASE("rebuild refuses a state that is not the watcher's decision") {
  const Rules r;
  OpponentTurns turns;
  turns.reset(0);
  State s = State::deal(r, 3);
  Rng play(1);
  std::vector<PastDecision> past;
  CHECK(turns.rebuild(s, 4, play, past));  // nothing recorded: nothing to rebuild
  CHECK(past.empty());
  while (s.current_player() == 0) {
    const int a = pile_loving_action(s, play);
    turns.record(s, a);
    s.apply_action(a);
  }
  CHECK_FALSE(turns.rebuild(s, 4, play, past));  // the opponent to move
  CHECK(past.empty());
}
