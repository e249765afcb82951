// Cards taken from a discard pile are known to the other player (issue 30): State::hand_card_known
// through draws, plays and discards, resample_hidden keeping them, the encoding's
// opponent_known_cards block, and heuristic_expert reading them from the state.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <vector>

#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"
#include "tests/engine/games/lc_helpers.h"

using namespace cfr::lc;
using namespace cfr::lc::testing;
using cfr::Rng;

namespace {

constexpr int kDeck = 16;  // default rules: draw from the deck
constexpr int pile(int c) { return 17 + c; }
constexpr int play(int slot) { return 2 * slot; }
constexpr int discard(int slot) { return 2 * slot + 1; }

// p0: discards its wager of color 0 and three more low cards over the first turns; p1 holds a
// wager of color 0 in slot 0 and takes cards back from the piles.
State known_cards_game_start() {
  const Rules r;
  return deal_with(r, {num(0, 1), num(0, 2), num(1, 1), num(1, 2), num(2, 1), num(2, 2), num(3, 1), wager(0)},
                   {wager(0), num(0, 9), num(1, 9), num(2, 9), num(3, 9), num(4, 9), num(4, 8), num(4, 7)});
}

// A random playout policy that draws from a pile two times in three when it can, so that many
// cards become known.
int pile_loving_action(const State& s, Rng& rng) {
  const cfr::ActionMask m = s.legal_mask();
  if (s.phase() == Phase::kDraw) {
    const cfr::ActionMask piles = m & ~(cfr::ActionMask{1} << s.rules().draw_deck_action());
    if (piles != 0 && rng.below(3) != 0)
      return cfr::mask_nth(piles, static_cast<int>(rng.below(static_cast<std::uint32_t>(cfr::mask_count(piles)))));
  }
  return cfr::mask_nth(m, static_cast<int>(rng.below(static_cast<std::uint32_t>(cfr::mask_count(m)))));
}

// The specification, kept as a list per player: (card, known) in slot order.
struct HandModel {
  std::array<std::vector<std::pair<Card, bool>>, 2> hand;
  explicit HandModel(const State& s) {
    for (int p = 0; p < 2; ++p)
      for (int i = 0; i < s.hand_size(p); ++i) hand[p].emplace_back(s.hand_card(p, i), false);
  }
  // Applies `action` as taken in `before` (a legal action).
  void apply(const State& before, int action) {
    const int p = before.current_player();
    auto& h = hand[p];
    if (before.phase() == Phase::kCard) {
      const auto [card, known] = h[static_cast<std::size_t>(action / 2)];
      h.erase(h.begin() + action / 2);
      if (!known)  // an identical known card (a wager) is no longer known to be there
        for (auto& [c, k] : h)
          if (k && c == card) {
            k = false;
            break;
          }
    } else if (action == before.rules().draw_deck_action()) {
      h.emplace_back(before.deck_card(before.deck_size() - 1), false);
    } else {
      h.emplace_back(before.pile_top(action - before.rules().draw_deck_action() - 1), true);
    }
  }
  std::uint32_t mask(int p) const {
    std::uint32_t m = 0;
    for (std::size_t i = 0; i < hand[p].size(); ++i) m |= (hand[p][i].second ? 1U : 0U) << i;
    return m;
  }
};

// resample_hidden's specification: the opponent's unknown slots (in slot order), then the deck,
// take a Fisher–Yates shuffle of the pool they form, drawn from rng.
std::pair<std::vector<Card>, std::vector<Card>> expected_resample(const State& s, int observer, Rng& rng) {
  const int o = 1 - observer;
  std::vector<Card> pool;
  for (int i = 0; i < s.hand_size(o); ++i)
    if (!s.hand_card_known(o, i)) pool.push_back(s.hand_card(o, i));
  for (int i = 0; i < s.deck_size(); ++i) pool.push_back(s.deck_card(i));
  for (int i = static_cast<int>(pool.size()) - 1; i > 0; --i)
    std::swap(pool[static_cast<std::size_t>(i)], pool[rng.below(static_cast<std::uint32_t>(i + 1))]);
  std::vector<Card> hand, deck;
  std::size_t k = 0;
  for (int i = 0; i < s.hand_size(o); ++i) hand.push_back(s.hand_card_known(o, i) ? s.hand_card(o, i) : pool[k++]);
  for (int i = 0; i < s.deck_size(); ++i) deck.push_back(pool[k++]);
  return {hand, deck};
}

std::vector<float> encode(const State& s, int observer, EncodingOptions o) {
  std::vector<float> v(static_cast<std::size_t>(encoding_size(s.rules(), o)), -1.0F);
  s.encode(observer, v, o);
  return v;
}

// States from pile-loving random play with the given rules.
std::vector<State> state_pool(const Rules& r, int games, std::uint64_t seed) {
  std::vector<State> out;
  Rng rng(seed);
  for (int g = 0; g < games; ++g) {
    State s = State::deal(r, seed + static_cast<std::uint64_t>(g));
    for (int step = 0; !s.is_terminal() && step < 400; ++step) {
      out.push_back(s);
      s.apply_action(pile_loving_action(s, rng));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a card taken from a pile is known until it leaves, and the marks shift with the hand") {
  State s = known_cards_game_start();
  for (int p = 0; p < 2; ++p) CHECK(s.known_mask(p) == 0);  // a deal is never known
  s.apply_action(discard(7));                               // p0 discards its wager of color 0
  s.apply_action(kDeck);
  CHECK(s.known_mask(0) == 0);  // a deck draw is never known
  s.apply_action(discard(6));   // p1 discards c4:8
  s.apply_action(pile(0));      // and takes the wager: known, in the new last slot
  CHECK(s.known_mask(1) == 0x80);
  CHECK(s.hand_card_known(1, 7));
  CHECK_FALSE(s.hand_card_known(1, 0));  // the dealt wager of the same color is not
  CHECK(s.known_count(1, 0, 0) == 1);
  CHECK(s.to_string().find("c0:W*") != std::string::npos);
  REQUIRE_NOTHROW(s.check_invariants());

  s.apply_action(discard(0));  // p0 discards c0 rank 1
  s.apply_action(kDeck);
  // p1 plays its dealt (unknown) wager: p0 cannot tell which wager left, so none is known now.
  s.apply_action(play(0));
  CHECK(s.known_mask(1) == 0);
  CHECK(s.hand_card(1, 6) == wager(0));
  CHECK(s.known_count(1, 0, 0) == 0);
  s.apply_action(pile(0));  // c0 rank 1
  CHECK(s.known_mask(1) == 0x80);

  s.apply_action(discard(0));  // p0 discards c0 rank 2
  s.apply_action(kDeck);
  s.apply_action(discard(1));  // p1 discards an unknown card below its known one: the mark shifts
  CHECK(s.known_mask(1) == 0x40);
  s.apply_action(pile(0));  // c0 rank 2
  CHECK(s.known_mask(1) == 0xC0);
  CHECK(s.hand_card(1, 6) == num(0, 1));
  CHECK(s.hand_card(1, 7) == num(0, 2));

  s.apply_action(discard(0));
  s.apply_action(kDeck);
  s.apply_action(play(0));  // p1 plays c0 rank 9 from slot 0: both marks shift down
  CHECK(s.known_mask(1) == 0x60);
  s.apply_action(kDeck);
  CHECK(s.known_mask(1) == 0x60);

  s.apply_action(discard(0));  // p0 discards c1 rank 2
  s.apply_action(kDeck);
  s.apply_action(discard(6));  // p1 discards its known c0 rank 2: its mark goes
  CHECK(s.known_mask(1) == 0x20);
  CHECK(s.known_count(1, 0, 2) == 0);
  s.apply_action(pile(1));  // c1 rank 2
  CHECK(s.known_mask(1) == 0xA0);

  s.apply_action(discard(0));
  s.apply_action(kDeck);
  s.apply_action(discard(5));  // p1 discards its known c0 rank 1; the known c1 rank 2 moves to slot 6
  CHECK(s.known_mask(1) == 0x40);
  CHECK(s.hand_card(1, 6) == num(1, 2));
  CHECK(s.known_count(1, 1, 2) == 1);
  CHECK(s.known_mask(0) == 0);
  REQUIRE_NOTHROW(s.check_invariants());
}

TEST_CASE("known marks follow the specification through random games, for every slot played or discarded") {
  for (const Rules& r : {Rules{}, Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5},
                         Rules{.n_colors = 8, .n_ranks = 12, .n_handshakes = 4, .hand_size = 12}}) {
    Rng rng(11);
    // left[slot][known]: cards that left that slot, known or not, while some card was known.
    std::array<std::array<int, 2>, kMaxHandSize> left{};
    int wager_unmarks = 0;
    for (int g = 0; g < 200; ++g) {
      State s = State::deal(r, static_cast<std::uint64_t>(g));
      HandModel model(s);
      for (int step = 0; step < 3000 && !s.is_terminal(); ++step) {
        const int a = pile_loving_action(s, rng);
        const int p = s.current_player();
        const std::uint32_t before_mask = s.known_mask(p);
        if (s.phase() == Phase::kCard && before_mask != 0) {
          ++left[static_cast<std::size_t>(a / 2)][s.hand_card_known(p, a / 2) ? 1 : 0];
        }
        const State before = s;
        s.apply_action(a);
        model.apply(before, a);
        for (int q = 0; q < 2; ++q) {
          INFO("game ", g, " step ", step, " player ", q, "\n", s.to_string());
          REQUIRE(s.known_mask(q) == model.mask(q));
        }
        if (before.phase() == Phase::kCard && !before.hand_card_known(p, a / 2) &&
            std::popcount(s.known_mask(p)) < std::popcount(before_mask))
          ++wager_unmarks;
      }
      REQUIRE_NOTHROW(s.check_invariants());
    }
    for (int slot = 0; slot < r.hand_size; ++slot) {
      INFO("hand size ", r.hand_size, " slot ", slot);
      CHECK(left[static_cast<std::size_t>(slot)][0] > 0);
      CHECK(left[static_cast<std::size_t>(slot)][1] > 0);
    }
    if (r.n_handshakes > 1) CHECK(wager_unmarks > 0);
  }
}

TEST_CASE("resample_hidden keeps the opponent's known cards in their slots and shuffles the rest") {
  const Rules r;
  const std::vector<State> pool = state_pool(r, 40, 3);
  const EncodingOptions with_known{.opponent_known_cards = true};
  int with_known_states = 0, without_known_states = 0;
  for (std::size_t n = 0; n < pool.size(); n += 3) {
    const State& s = pool[n];
    const int observer = s.current_player();
    const int o = 1 - observer;
    const std::uint32_t mask = s.known_mask(o);
    ++(mask != 0 ? with_known_states : without_known_states);
    const auto enc = encode(s, observer, with_known);
    std::vector<bool> moved(static_cast<std::size_t>(s.hand_size(o)), false);
    bool deck_moved = false;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      State t = s;
      Rng rng(seed), spec_rng(seed);
      t.resample_hidden(observer, rng);
      const auto [hand, deck] = expected_resample(s, observer, spec_rng);
      INFO("state ", n, " seed ", seed, "\n", s.to_string());
      REQUIRE_NOTHROW(t.check_invariants());
      CHECK(rng() == spec_rng());  // the same draws, as many of them
      CHECK(t.known_mask(o) == mask);
      CHECK(t.known_mask(observer) == s.known_mask(observer));
      for (int i = 0; i < t.hand_size(o); ++i) {
        CHECK(t.hand_card(o, i) == hand[static_cast<std::size_t>(i)]);
        if (s.hand_card_known(o, i)) CHECK(t.hand_card(o, i) == s.hand_card(o, i));
        if (!(t.hand_card(o, i) == s.hand_card(o, i))) moved[static_cast<std::size_t>(i)] = true;
      }
      for (int i = 0; i < t.deck_size(); ++i) {
        CHECK(t.deck_card(i) == deck[static_cast<std::size_t>(i)]);
        if (!(t.deck_card(i) == s.deck_card(i))) deck_moved = true;
      }
      for (int i = 0; i < s.hand_size(observer); ++i) CHECK(t.hand_card(observer, i) == s.hand_card(observer, i));
      CHECK(encode(t, observer, with_known) == enc);  // the same information set for the observer
    }
    // Every unknown slot took another card under some seed (unless all the hidden cards are the
    // same wager: never with a deck of more than a few cards).
    if (s.deck_size() > 4) {
      CHECK(deck_moved);
      for (int i = 0; i < s.hand_size(o); ++i) CHECK(moved[static_cast<std::size_t>(i)] == !s.hand_card_known(o, i));
    }
  }
  CHECK(with_known_states > 50);
  CHECK(without_known_states > 50);
}

TEST_CASE("resample_hidden draws exactly as before when the opponent has no known card") {
  // The pre-issue-30 algorithm: the opponent's whole hand, then the deck, shuffled together.
  const Rules r;
  for (std::uint64_t deal = 0; deal < 20; ++deal) {
    State s = State::deal(r, deal);
    Rng play(deal);
    for (int k = 0; k < static_cast<int>(deal) * 3; ++k) s.apply_action(random_legal_action(s, play));
    const int observer = s.current_player(), o = 1 - observer;
    if (s.known_mask(o) != 0) continue;
    std::vector<Card> pool;
    for (int i = 0; i < s.hand_size(o); ++i) pool.push_back(s.hand_card(o, i));
    for (int i = 0; i < s.deck_size(); ++i) pool.push_back(s.deck_card(i));
    Rng rng(deal + 100), old(deal + 100);
    for (int i = static_cast<int>(pool.size()) - 1; i > 0; --i)
      std::swap(pool[static_cast<std::size_t>(i)], pool[old.below(static_cast<std::uint32_t>(i + 1))]);
    s.resample_hidden(observer, rng);
    std::size_t k = 0;
    for (int i = 0; i < s.hand_size(o); ++i) CHECK(s.hand_card(o, i) == pool[k++]);
    for (int i = 0; i < s.deck_size(); ++i) CHECK(s.deck_card(i) == pool[k++]);
    CHECK(rng() == old());
  }
}

TEST_CASE("the opponent_known_cards block counts the opponent's known cards by color and rank") {
  const Rules r;
  const EncodingOptions on{.opponent_known_cards = true};
  CHECK(encoding_size(r, {}) == 297);  // off by default: every existing size stays
  CHECK(encoding_size(r, on) == 347);
  CHECK(encoding_size(r, {.derived_playability = false, .slot_aware_playability = false, .opponent_known_cards = true}) == 221);
  CHECK(encoding_size(Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5}, {}) == 177);
  CHECK(encoding_size(Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5}, on) == 198);

  State s = known_cards_game_start();
  for (const int a : {discard(7), kDeck, discard(6), pile(0)}) s.apply_action(a);  // p1 takes c0:W
  for (const int a : {discard(0), kDeck, discard(2), pile(0)}) s.apply_action(a);  // p1 takes c0 rank 1
  REQUIRE(s.known_mask(1) == 0xC0);
  std::vector<float> expected(50, 0.0F);
  expected[0] = 1;  // c0 wager
  expected[1] = 1;  // c0 rank 1
  for (const int observer : {0, 1}) {
    const auto full = encode(s, observer, on);
    const auto old = encode(s, observer, {});
    REQUIRE(full.size() == 347);
    CHECK(std::equal(old.begin(), old.end(), full.begin()));  // the block comes after the others
    const std::vector<float> block(full.begin() + 297, full.end());
    // Player 0 sees player 1's known cards; player 1 sees player 0's, none.
    CHECK(block == (observer == 0 ? expected : std::vector<float>(50, 0.0F)));
  }
  // Without the optional blocks it follows the base encoding directly.
  const auto small = encode(s, 0, {.derived_playability = false, .slot_aware_playability = false, .opponent_known_cards = true});
  CHECK(std::vector<float>(small.begin() + 171, small.end()) == expected);

  // Over random play the block equals known_count, counts above 1 included where they occur.
  for (const State& t : state_pool(r, 20, 9)) {
    const int observer = t.current_player();
    const auto v = encode(t, observer, on);
    for (int c = 0; c < r.n_colors; ++c)
      for (int k = 0; k <= r.n_ranks; ++k)
        REQUIRE(v[static_cast<std::size_t>(297 + c * (r.n_ranks + 1) + k)] ==
                static_cast<float>(t.known_count(1 - observer, c, k)));
  }
}

TEST_CASE("the slot_cards block gives each hand slot's card one-hot with both expeditions of its color") {
  const Rules r;
  const int C = r.n_colors, R = r.n_ranks, per = C + R + 5;
  CHECK(encoding_size(r, {.slot_cards = true}) == 297 + 152);
  CHECK(encoding_size(r, {.opponent_known_cards = true, .slot_cards = true}) == 499);
  const Rules small{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5};
  CHECK(encoding_size(small, {.slot_cards = true}) == 177 + 5 * (3 + 6 + 5));

  State s = known_cards_game_start();
  for (const int a : {play(0), kDeck, play(0), kDeck}) s.apply_action(a);  // p0 plays c0 rank 1; p1 its c0 wager
  REQUIRE(s.expedition(0, 0).len == 1);
  REQUIRE(s.expedition(1, 0).len == 1);
  for (const int observer : {0, 1}) {
    const auto plain = encode(s, observer, {.opponent_known_cards = true});
    const auto full = encode(s, observer, {.opponent_known_cards = true, .slot_cards = true});
    REQUIRE(full.size() == 499);
    CHECK(std::equal(plain.begin(), plain.end(), full.begin()));  // the block comes after every other
    for (int slot = 0; slot < r.hand_size; ++slot) {
      const float* b = full.data() + 347 + slot * per;
      if (slot >= s.hand_size(observer)) {
        CHECK(std::all_of(b, b + per, [](float x) { return x == 0.0F; }));
        continue;
      }
      const Card c = s.hand_card(observer, slot);
      CAPTURE(slot);
      CHECK(std::count(b, b + C, 1.0F) == 1);
      CHECK(b[c.color()] == 1.0F);
      CHECK(std::count(b + C, b + C + R + 1, 1.0F) == 1);
      CHECK(b[C + c.rank()] == 1.0F);
      const Expedition& mine = s.expedition(observer, c.color());
      const Expedition& theirs = s.expedition(1 - observer, c.color());
      CHECK(b[C + R + 1] == doctest::Approx(static_cast<double>(mine.len) / r.cards_per_color()));
      CHECK(b[C + R + 2] == doctest::Approx(static_cast<double>(mine.last_rank) / R));
      CHECK(b[C + R + 3] == doctest::Approx(static_cast<double>(theirs.len) / r.cards_per_color()));
      CHECK(b[C + R + 4] == doctest::Approx(static_cast<double>(theirs.last_rank) / R));
    }
  }
  // Player 0 holds c0 rank 2 (slot 0 after its play): its color's expeditions are both open.
  const auto v = encode(s, 0, {.slot_cards = true});
  REQUIRE(s.hand_card(0, 0) == num(0, 2));
  CHECK(v[297 + C + R + 1] > 0.0F);
  CHECK(v[297 + C + R + 3] > 0.0F);
}

TEST_CASE("encoding_column_map places an encoding's floats inside one that holds more blocks") {
  const Rules r;
  const EncodingOptions base{}, known{.opponent_known_cards = true}, slots{.slot_cards = true},
      both{.opponent_known_cards = true, .slot_cards = true};
  // Equal encodings: the identity.
  const auto same = encoding_column_map(r, base, base);
  REQUIRE(same.size() == 297);
  for (int i = 0; i < 297; ++i) CHECK(same[static_cast<std::size_t>(i)] == i);
  // `to` lacks a block of `from`: no map.
  CHECK(encoding_column_map(r, both, known).empty());
  CHECK(encoding_column_map(r, base, {.derived_playability = false}).empty());
  // A block in the middle (known cards between the old floats and slot_cards): every float of
  // `from` lands where `to` encodes the same thing, the new ones are −1.
  for (const auto& [from, to] : {std::pair{base, both}, std::pair{slots, both}, std::pair{known, both},
                                 std::pair{EncodingOptions{.derived_playability = false}, both}}) {
    const auto map = encoding_column_map(r, from, to);
    REQUIRE(map.size() == static_cast<std::size_t>(encoding_size(r, to)));
    CHECK(std::count_if(map.begin(), map.end(), [](int c) { return c >= 0; }) == encoding_size(r, from));
    for (const State& t : state_pool(r, 5, 4)) {
      const auto a = encode(t, t.current_player(), from), b = encode(t, t.current_player(), to);
      for (std::size_t j = 0; j < map.size(); ++j)
        if (map[j] >= 0) REQUIRE(b[j] == a[static_cast<std::size_t>(map[j])]);
    }
  }
}

TEST_CASE("heuristic_expert decides from the state alone: a fresh bot makes the same move") {
  const Rules r;
  auto expert = make_bot("heuristic_expert", r);
  auto other = make_bot("heuristic_balanced", r);
  Rng rng(0);
  int checked = 0, with_known = 0;
  for (int g = 0; g < 20; ++g) {
    State s = State::deal(r, static_cast<std::uint64_t>(g));
    while (!s.is_terminal()) {
      const bool mine = s.current_player() == g % 2;
      int a;
      if (mine) {
        a = expert->choose_action(s, rng);
        auto fresh = make_bot("heuristic_expert", r);
        CHECK(fresh->choose_action(s, rng) == a);
        ++checked;
        with_known += s.known_mask(1 - s.current_player()) != 0 ? 1 : 0;
      } else {
        a = other->choose_action(s, rng);
      }
      s.apply_action(a);
    }
  }
  CHECK(checked > 1000);
  CHECK(with_known > 50);
}
