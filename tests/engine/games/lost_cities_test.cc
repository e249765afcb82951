#include <doctest/doctest.h>

#include <bit>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/lost_cities.h"
#include "tests/engine/games/lc_helpers.h"

using namespace cfr::lc;
using namespace cfr::lc::testing;
using cfr::IllegalActionError;
using cfr::InputError;

namespace {
std::string error_of(const Rules& r) {
  try {
    r.validate();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the default rules describe the standard 60-card game with 22 actions") {
  const Rules r;
  CHECK_NOTHROW(r.validate());
  CHECK(r.deck_size() == 60);
  CHECK(r.action_size() == 22);
  CHECK(r.color_face_sum() == 54);
  CHECK(r.face(0) == 0);
  CHECK(r.face(1) == 2);
  CHECK(r.face(9) == 10);
}

TEST_CASE("invalid rule settings are rejected with the knob, its value and the rule") {
  CHECK(error_of(Rules{.n_colors = 0}).find("n_colors = 0") != std::string::npos);
  CHECK(error_of(Rules{.n_ranks = -1}).find("n_ranks = -1") != std::string::npos);
  CHECK(error_of(Rules{.min_rank = 0}).find("min_rank = 0: must be > 0") != std::string::npos);
  CHECK(error_of(Rules{.n_handshakes = -1}).find("n_handshakes = -1") != std::string::npos);
  CHECK(error_of(Rules{.hand_size = 0}).find("hand_size = 0") != std::string::npos);
  CHECK(error_of(Rules{.bonus_threshold = 0}).find("bonus_threshold = 0") != std::string::npos);
  CHECK(error_of(Rules{.n_colors = 1, .n_ranks = 3, .n_handshakes = 0, .hand_size = 2}).find("deck size") != std::string::npos);
  CHECK(error_of(Rules{.n_colors = 9}).find("n_colors = 9: must be in [1, 8]") != std::string::npos);
  CHECK(error_of(Rules{.n_colors = 1, .n_ranks = 3, .n_handshakes = 1, .hand_size = 2}).empty());
  CHECK_THROWS_AS(State::deal(Rules{.hand_size = 40}, 1), InputError);
}

TEST_CASE("a deck that is not the rules' multiset of cards is rejected, naming the position") {
  std::vector<int> deck;
  const Rules r;
  for (int i = 0; i < 60; ++i) deck.push_back(i < 50 ? i : 0);  // 0 is a wager: 3 copies allowed
  try {
    (void)State::from_deck(r, deck);
    FAIL("accepted a bad deck");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("deck[52]: card id 0 appears more than 3 time(s)") != std::string::npos);
  }
  CHECK_THROWS_AS(State::from_deck(r, std::vector<int>(59, 1)), InputError);
  deck.assign(60, 1);
  deck[0] = 50;  // colors 0..4 × ranks 0..9 → ids 0..49
  CHECK_THROWS_WITH_AS(State::from_deck(r, deck), doctest::Contains("deck[0]: card id 50 out of range"), InputError);
}

TEST_CASE("dealing gives 8 cards each, player 0 first from the top, and 44 left in the deck") {
  const Rules r;
  const State s =
      deal_with(r, {num(0, 1), num(0, 2), num(0, 3), num(0, 4), num(0, 5), num(0, 6), num(0, 7), num(0, 8)},
                {num(1, 1), num(1, 2), num(1, 3), num(1, 4), num(1, 5), num(1, 6), num(1, 7), num(1, 8)}, {num(2, 9)});
  CHECK(s.deck_size() == 44);
  CHECK(s.hand_card(0, 0) == num(0, 1));
  CHECK(s.hand_card(1, 7) == num(1, 8));
  CHECK(s.deck_card(43) == num(2, 9));
  CHECK(s.current_player() == 0);
  CHECK(s.phase() == Phase::kCard);
  CHECK_NOTHROW(s.check_invariants());
}

TEST_CASE("legal masks follow the play, discard and draw rules exactly") {
  const Rules r;
  // p0: W0, c0 face 5, c0 face 3, c1 W, c1 face 10, c2 face 2, c3 face 4, c4 W
  State s =
      deal_with(r, {wager(0), num(0, 4), num(0, 2), wager(1), num(1, 9), num(2, 1), num(3, 3), wager(4)},
                {num(0, 1), num(0, 3), num(1, 1), num(1, 2), num(2, 2), num(2, 3), num(3, 1), num(3, 2)}, {num(4, 9), num(4, 8)});
  // Everything is playable on empty expeditions: all 16 card actions.
  CHECK(s.legal_mask() == 0xffffULL);
  s.apply_action(2);  // play c0 face 5 (slot 1)
  CHECK(s.phase() == Phase::kDraw);
  CHECK(s.legal_mask() == (1ULL << 16));  // no pile yet
  s.apply_action(16);                     // draws c4 face 10 (top) into slot 7
  CHECK(s.hand_card(0, 7) == num(4, 9));
  CHECK(s.current_player() == 1);
  s.apply_action(3);  // p1 discards slot 1: c0 face 4
  CHECK(s.pending_color() == 0);
  CHECK(s.legal_mask() == (1ULL << 16));  // pile 0 is the pending color
  CHECK_THROWS_AS(s.apply_action(17), IllegalActionError);
  s.apply_action(16);
  // p0 hand: W0, c0f3, W1, c1f10, c2f2, c3f4, W4, c4f10. c0 has a numeric (rank 4): W0 and c0 rank 2 dead.
  const cfr::ActionMask m = s.legal_mask();
  CHECK_FALSE(cfr::mask_has(m, 0));
  CHECK_FALSE(cfr::mask_has(m, 2));
  for (int i = 2; i < 8; ++i) CHECK(cfr::mask_has(m, 2 * i));
  for (int i = 0; i < 8; ++i) CHECK(cfr::mask_has(m, 2 * i + 1));
  s.apply_action(1);  // discard W0 onto pile 0 (over c0 face 4)
  CHECK(s.pile_size(0) == 2);
  CHECK(s.legal_mask() == (1ULL << 16));  // pile 0 pending
  CHECK_THROWS_WITH_AS(s.apply_action(0), doctest::Contains("illegal action 0 for player 0 in the DRAW phase"),
                       IllegalActionError);
  CHECK_THROWS_AS(s.apply_action(22), IllegalActionError);
  CHECK_THROWS_AS(s.apply_action(-1), IllegalActionError);
  s.apply_action(16);
  s.apply_action(1);  // p1 discards slot 0 (c0 face 2) onto pile 0
  CHECK(s.legal_mask() == (1ULL << 16));
  s.apply_action(16);
  s.apply_action(7);                            // p0 discards slot 3
  CHECK((s.legal_mask() & (1ULL << 17)) != 0);  // pile 0 is drawable now
  s.apply_action(17);                           // takes c0 face 2 back
  CHECK(s.pile_size(0) == 2);
  CHECK_NOTHROW(s.check_invariants());
}

TEST_CASE("the game ends as soon as a draw empties the deck, and only then") {
  const Rules r{.n_colors = 2, .n_ranks = 3, .n_handshakes = 1, .hand_size = 3};  // 8 cards, 2 left
  State s = State::deal(r, 5);
  CHECK(s.deck_size() == 2);
  s.apply_action(1);
  CHECK_FALSE(s.is_terminal());
  s.apply_action(r.draw_deck_action());
  CHECK_FALSE(s.is_terminal());
  s.apply_action(1);
  CHECK_FALSE(s.is_terminal());
  s.apply_action(r.draw_deck_action());
  CHECK(s.is_terminal());
  CHECK(s.legal_mask() == 0);
  CHECK(s.current_player() == 1);  // the player who drew last stays the mover of record
  CHECK_THROWS_AS(s.apply_action(1), IllegalActionError);
}

TEST_CASE("expedition scores: empty, wagers, bonus and negative expeditions") {
  const Rules r;
  using V = std::vector<Card>;
  CHECK(score_expedition(r, V{}) == 0);
  CHECK(score_expedition(r, V{num(0, 1)}) == 2 - 20);                                                 // −18
  CHECK(score_expedition(r, V{wager(0)}) == (0 - 20) * 2);                                            // lone wager: −40
  CHECK(score_expedition(r, V{wager(0), wager(0), num(0, 9)}) == (10 - 20) * 3);                      // −30
  CHECK(score_expedition(r, V{wager(0), num(0, 5), num(0, 8), num(0, 9)}) == (6 + 9 + 10 - 20) * 2);  // 10
  // 8 cards earn the bonus: 3 wagers + faces 2..6 = 20 → 0·4 + 20
  CHECK(score_expedition(r, V{wager(0), wager(0), wager(0), num(0, 1), num(0, 2), num(0, 3), num(0, 4), num(0, 5)}) == 20);
  // bonus applies even when negative: 8 numerics 2..9 = 44 → 24 + 20 = 44; with faces below B:
  const Rules cheap{.min_rank = 1, .n_handshakes = 0, .bonus_threshold = 3};
  CHECK(score_expedition(cheap, V{num(0, 1), num(0, 2), num(0, 3)}) == (1 + 2 + 3 - 20) + 20);  // 6
  CHECK(score_expedition(r, V{num(0, 1), num(0, 2), num(0, 3), num(0, 4), num(0, 5), num(0, 6), num(0, 7), num(0, 8)}) ==
        (2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 - 20) + 20);
}

TEST_CASE("totals follow the expeditions as cards are played") {
  const Rules r;
  State s = deal_with(r, {wager(2), num(2, 5), num(2, 9), num(0, 1), num(0, 2), num(0, 3), num(0, 4), num(0, 5)},
                      {num(1, 1), num(1, 2), num(1, 3), num(1, 4), num(1, 5), num(1, 6), num(1, 7), num(1, 8)});
  s.apply_action(0);  // W2
  CHECK(s.total(0) == -40);
  s.apply_action(16);
  s.apply_action(0);  // p1 plays c1 face 2
  CHECK(s.total(1) == -18);
  s.apply_action(16);
  s.apply_action(0);  // p0 plays c2 face 6 (slot 0 after the shift)
  CHECK(s.total(0) == (6 - 20) * 2);
  CHECK(s.returns(0) == (6 - 20) * 2 - (-18));
  CHECK(s.returns(1) == -s.returns(0));
  CHECK_NOTHROW(s.check_invariants());
}

TEST_CASE("permuting the colours is the same game under another naming") {
  for (const Rules& r : {Rules{}, Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5}}) {
    const int C = r.n_colors, D = r.draw_deck_action();
    std::vector<int> to(static_cast<std::size_t>(C)), back(static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) to[static_cast<std::size_t>(c)] = (c * 2 + 1) % C;  // a permutation for 5 and 3 colours
    for (int c = 0; c < C; ++c) back[static_cast<std::size_t>(to[static_cast<std::size_t>(c)])] = c;
    // The same action on a relabelled state: card actions name slots; pile c's draw is pile to[c]'s.
    const auto renamed = [&](int a) { return a > D ? D + 1 + to[static_cast<std::size_t>(a - D - 1)] : a; };
    std::vector<float> x(static_cast<std::size_t>(State::deal(r, 1).info_state_size())), y(x.size());
    for (const std::uint64_t seed : {1, 2, 3}) {
      State s = State::deal(r, seed);
      State t = s;
      t.permute_colors(to);
      cfr::Rng rng(seed);
      int draws = 0;
      for (int step = 0; step < 400 && !s.is_terminal(); ++step) {
        INFO("rules colours ", C, " deal ", seed, " step ", step);
        t.check_invariants();
        CHECK(t.returns(0) == s.returns(0));
        CHECK(t.current_player() == s.current_player());
        State u = t;
        u.permute_colors(back);
        REQUIRE(u == s);  // the inverse permutation restores the state exactly
        cfr::ActionMask renamed_mask = 0;
        for (cfr::ActionMask m = s.legal_mask(); m != 0; m &= m - 1)
          renamed_mask |= cfr::ActionMask{1} << renamed(std::countr_zero(m));
        REQUIRE(t.legal_mask() == renamed_mask);
        // A card of colour c in s is one of colour to[c] in t, slot for slot.
        for (int i = 0; i < s.hand_size(0); ++i)
          CHECK(t.hand_card(0, i).v ==
                Card::make(to[static_cast<std::size_t>(s.hand_card(0, i).color())], s.hand_card(0, i).rank()).v);
        // Random play, taking discards back often (piles, pending colours and public counts move).
        const cfr::ActionMask m = s.legal_mask();
        const cfr::ActionMask piles = m & ~((cfr::ActionMask{2} << D) - 1);
        const cfr::ActionMask pick = piles != 0 && rng.below(2) == 0 ? piles : m;
        int j = static_cast<int>(rng.below(static_cast<std::uint32_t>(std::popcount(pick))));
        int a = -1;
        for (cfr::ActionMask k = pick; k != 0; k &= k - 1)
          if (j-- == 0) a = std::countr_zero(k);
        draws += a > D;
        s.apply_action(a);
        t.apply_action(renamed(a));
      }
      CHECK(draws > 0);
      CHECK(t.is_terminal() == s.is_terminal());
      CHECK(t.returns(1) == s.returns(1));
    }
    // The identity changes nothing; anything but a permutation is refused.
    State s = State::deal(r, 9), t = s;
    std::vector<int> id(static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) id[static_cast<std::size_t>(c)] = c;
    t.permute_colors(id);
    CHECK(t == s);
    s.encode_info_state(0, x);
    t.encode_info_state(0, y);
    CHECK(x == y);
    id[1] = 0;
    CHECK_THROWS_AS(t.permute_colors(id), cfr::CheckError);
    id.pop_back();
    CHECK_THROWS_AS(t.permute_colors(id), cfr::CheckError);
  }
}
