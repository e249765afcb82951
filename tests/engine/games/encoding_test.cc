// The encoding's blocks pinned on a hand-built state (offsets of lost-cities.md §2).
#include <doctest/doctest.h>

#include <vector>

#include "engine/core/errors.h"
#include "engine/games/lost_cities.h"
#include "tests/engine/games/lc_helpers.h"

using namespace cfr::lc;
using namespace cfr::lc::testing;
using doctest::Approx;

namespace {

// p0 opens color 0 with face 5 and draws c4 face 10; p1 discards c0 face 4 and is to draw.
State scenario() {
  const Rules r;
  State s =
      deal_with(r, {wager(0), num(0, 4), num(0, 2), wager(1), num(1, 9), num(2, 1), num(3, 3), wager(4)},
                {num(0, 1), num(0, 3), num(1, 1), num(1, 2), num(2, 2), num(2, 3), num(3, 1), num(3, 2)}, {num(4, 9), num(4, 8)});
  s.apply_action(2);
  s.apply_action(16);
  s.apply_action(3);
  return s;
}

std::vector<float> encode(const State& s, int observer, EncodingOptions o = {}) {
  std::vector<float> v(static_cast<std::size_t>(encoding_size(s.rules(), o)), -1.0F);
  s.encode(observer, v, o);
  return v;
}

float sum(const std::vector<float>& v, int from, int to) {
  float t = 0;
  for (int i = from; i < to; ++i) t += v[static_cast<std::size_t>(i)];
  return t;
}

}  // namespace

TEST_CASE("encoding sizes are 171, 249, 219 and 297 for the four flag combinations") {
  const Rules r;
  CHECK(encoding_size(r, {.derived_playability = false, .slot_aware_playability = false}) == 171);
  CHECK(encoding_size(r, {.derived_playability = true, .slot_aware_playability = false}) == 249);
  CHECK(encoding_size(r, {.derived_playability = false, .slot_aware_playability = true}) == 219);
  CHECK(encoding_size(r, {}) == 297);
  CHECK(encoding_size(Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5}, {}) == 177);
}

TEST_CASE("the encoder refuses an output span that is too short") {
  const State s = State::deal(Rules{}, 1);
  std::vector<float> v(296);
  CHECK_THROWS_AS(s.encode_info_state(0, v), cfr::CheckError);
}

TEST_CASE("encoding blocks hold the hand-built state's values from player 0's view") {
  const State s = scenario();
  const auto v = encode(s, 0);
  // 0–4: phase one-hot (DRAW), current player 1, observer 0, deck 43/60.
  CHECK(v[0] == 0.0F);
  CHECK(v[1] == 1.0F);
  CHECK(v[2] == 1.0F);
  CHECK(v[3] == 0.0F);
  CHECK(v[4] == Approx(43.0 / 60));
  // 5–28: own hand W0, c0r2, W1, c1r9, c2r1, c3r3, W4, c4r9.
  CHECK(v[5] == 1.0F);
  CHECK(v[6] == Approx(1.0 / 5));
  CHECK(v[7] == 0.0F);
  CHECK(v[8] == 1.0F);
  CHECK(v[10] == Approx(2.0 / 9));
  CHECK(v[5 + 21] == 1.0F);
  CHECK(v[5 + 22] == Approx(5.0 / 5));
  CHECK(v[5 + 23] == Approx(9.0 / 9));
  // 29–68: expeditions, player 0 then player 1, per color len, last rank, wagers, score.
  CHECK(v[29] == Approx(1.0 / 12));
  CHECK(v[30] == Approx(4.0 / 9));
  CHECK(v[31] == 0.0F);
  CHECK(v[32] == Approx(-15.0 / 380));
  CHECK(sum(v, 33, 69) == 0.0F);
  // 69–88: pile 0 holds c0 rank 3.
  CHECK(v[69] == Approx(1.0 / 12));
  CHECK(v[70] == 1.0F);
  CHECK(v[71] == Approx(1.0 / 5));
  CHECK(v[72] == Approx(3.0 / 9));
  CHECK(sum(v, 73, 89) == 0.0F);
  // 89–138: public histogram (raw counts): c0 rank 4 in p0's expedition, c0 rank 3 on the pile.
  CHECK(v[89 + 4] == 1.0F);
  CHECK(v[89 + 3] == 1.0F);
  CHECK(sum(v, 89, 139) == 2.0F);
  // 139–142: totals and turn count.
  CHECK(v[139] == Approx(-15.0 / 380));
  CHECK(v[140] == 0.0F);
  CHECK(v[141] == Approx(-15.0 / 380));
  CHECK(v[142] == Approx(1.0 / 120));
  // 143–148: pending discarded color 0.
  CHECK(v[143] == 1.0F);
  CHECK(sum(v, 144, 149) == 0.0F);
  // 149–170: legal mask: only the deck (pile 0 is pending).
  CHECK(v[149 + 16] == 1.0F);
  CHECK(sum(v, 149, 171) == 1.0F);
  // 171–245: derived, color 0.
  const float c0[15] = {0, 0, 5.0F / 54, 0,         1.0F / 12, 4.0F / 54, 2.0F / 12, 1.0F / 3,
                        0, 0, 1.0F / 12, 3.0F / 54, 0,         0,         8.0F / 12};
  for (int k = 0; k < 15; ++k) {
    INFO("derived color 0 field ", k);
    CHECK(v[171 + k] == Approx(c0[k]));
  }
  // derived, color 4: unopened; W4 and c4r9 (face 10) in hand.
  const float c4[15] = {1, 0, 0, 0, 0, 0, 2.0F / 12, 1.0F / 3, 10.0F / 54, 1.0F / 12, 0, 0, 0, 0, 10.0F / 12};
  for (int k = 0; k < 15; ++k) {
    INFO("derived color 4 field ", k);
    CHECK(v[171 + 60 + k] == Approx(c4[k]));
  }
  // 246–248
  CHECK(v[246] == Approx(43.0 / 60));
  CHECK(v[247] == Approx(1.0 / 120));
  CHECK(v[248] == Approx(43.0 / 120));
  // 249–296: slot-aware. Slot 0 W0 (color 0 started): nothing; slot 1 c0r2: dead numeric;
  // slot 2 W1: starts a color with a wager first; slot 3 c1r9: numeric open.
  const float slots[4][6] = {{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 0}, {1, 0, 1, 0, 0, 1}, {1, 1, 0, 0, 0, 0}};
  for (int s2 = 0; s2 < 4; ++s2)
    for (int k = 0; k < 6; ++k) {
      INFO("slot ", s2, " field ", k);
      CHECK(v[249 + 6 * s2 + k] == slots[s2][k]);
    }
}

TEST_CASE("encoding from player 1's view shows player 1's hand and the other perspective") {
  const State s = scenario();
  const auto v = encode(s, 1);
  CHECK(v[3] == 1.0F);
  CHECK(v[5] == 1.0F);  // slot 0: c0 rank 1
  CHECK(v[6] == Approx(1.0 / 5));
  CHECK(v[7] == Approx(1.0 / 9));
  CHECK(sum(v, 5 + 21, 5 + 24) == 0.0F);  // 7 cards: slot 7 empty
  CHECK(v[139] == 0.0F);
  CHECK(v[140] == Approx(-15.0 / 380));
  CHECK(v[141] == Approx(15.0 / 380));
  // derived color 0 for player 1: unopened, c0r1 playable (face 2), pile top c0r3 playable (face 4).
  const float c0[15] = {1, 0, 0, 0, 0, 0, 1.0F / 12, 0, 2.0F / 54, 1.0F / 12, 0, 0, 1, 4.0F / 54, 9.0F / 12};
  for (int k = 0; k < 15; ++k) {
    INFO("derived color 0 field ", k);
    CHECK(v[171 + k] == Approx(c0[k]));
  }
  CHECK(sum(v, 249 + 42, 297) == 0.0F);  // empty slot 7
}

TEST_CASE("encodings without the optional blocks are prefixes of the full encoding") {
  const State s = scenario();
  const auto full = encode(s, 0);
  const auto base = encode(s, 0, {.derived_playability = false, .slot_aware_playability = false});
  const auto slot_only = encode(s, 0, {.derived_playability = false, .slot_aware_playability = true});
  for (int i = 0; i < 171; ++i) {
    CHECK(base[static_cast<std::size_t>(i)] == full[static_cast<std::size_t>(i)]);
    CHECK(slot_only[static_cast<std::size_t>(i)] == full[static_cast<std::size_t>(i)]);
  }
  for (int i = 0; i < 48; ++i) CHECK(slot_only[static_cast<std::size_t>(171 + i)] == full[static_cast<std::size_t>(249 + i)]);
}

TEST_CASE("the world encoding gives the deck's order: the next card to the player to move") {
  const State s = scenario();  // c4 face 9 on top of the deck; player 1 is to draw
  const Rules& r = s.rules();
  const int ids = r.n_colors * (r.n_ranks + 1), n = world_encoding_size(r), len = s.deck_size();
  REQUIRE(n == 3 * ids + 1);
  REQUIRE(s.current_player() == 1);
  REQUIRE(s.deck_card(len - 1) == num(4, 8));
  const int id = card_id(r, num(4, 8));  // a numeric card: one copy
  std::vector<float> w1(static_cast<std::size_t>(n), -1.0F), w0(static_cast<std::size_t>(n), -1.0F);
  s.encode_world(1, w1);
  s.encode_world(0, w0);
  CHECK(w1[static_cast<std::size_t>(id)] == 1.0F);  // player 1 draws it
  CHECK(w1[static_cast<std::size_t>(ids + id)] == 0.0F);
  CHECK(w0[static_cast<std::size_t>(id)] == 0.0F);  // from player 0's seat: the opponent's
  CHECK(w0[static_cast<std::size_t>(ids + id)] == 1.0F);
  CHECK(w1[static_cast<std::size_t>(2 * ids + id)] == 1.0F);  // on top: comes up first
  CHECK(w1[static_cast<std::size_t>(3 * ids)] == Approx(static_cast<double>(len) / 60));
  CHECK(sum(w1, 0, 2 * ids) == Approx(len));                // every deck card once, in one of the two seats
  CHECK(sum(w1, 0, ids) == Approx(sum(w0, ids, 2 * ids)));  // the seats swap with the observer
  std::vector<float> short_span(static_cast<std::size_t>(n - 1));
  CHECK_THROWS_AS(s.encode_world(0, short_span), cfr::CheckError);
}

TEST_CASE("the world encoding of a fresh deal holds every deck card once, alternating between the seats") {
  const Rules r;
  const State s = State::deal(r, 7);
  const int ids = r.n_colors * (r.n_ranks + 1), n = world_encoding_size(r);
  std::vector<float> w(static_cast<std::size_t>(n));
  s.encode_world(s.current_player(), w);
  const int len = s.deck_size();
  CHECK(sum(w, 0, ids) == Approx((len + 1) / 2));  // the mover draws the top, the third, ...
  CHECK(sum(w, ids, 2 * ids) == Approx(len / 2));
  CHECK(w[static_cast<std::size_t>(card_id(r, s.deck_card(len - 1)))] >= 1.0F);
  CHECK(w[static_cast<std::size_t>(ids + card_id(r, s.deck_card(len - 2)))] >= 1.0F);
  double soon = 0;
  for (int d = 0; d < len; ++d) soon += 1.0 - static_cast<double>(d) / len;
  CHECK(sum(w, 2 * ids, 3 * ids) == Approx(soon).epsilon(1e-4));
  CHECK(w[static_cast<std::size_t>(3 * ids)] == Approx(static_cast<double>(len) / r.deck_size()));
}
