// determinized_search (engine/traversal/determinized_search.h), the search rule the search player
// and MMD's search teacher share, on Kuhn positions whose values are known: the better move is
// found, the prior keeps the network's move against weak evidence, one candidate is the network's
// move with no forward, value leaves are scaled and signed from the decider's seat, and the
// result depends only on the decision and the seed.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/games/kuhn.h"
#include "engine/traversal/determinized_search.h"
#include "engine/traversal/traversal_games.h"
#include "tests/sched/helpers.h"

using namespace cfr;
using cfr::testing::FixedNets;

namespace {

using KuhnGame = SmallTraversalGame<kuhn::State>;

/// Kuhn after the deal (player 0 holds `card0`, player 1 `card1`) and the actions `history`.
kuhn::State kuhn_position(int card0, int card1, std::initializer_list<int> history) {
  kuhn::State s = kuhn::State::initial();
  s.apply_action(card0);
  s.apply_action(card1);
  for (int a : history) s.apply_action(a);
  return s;
}

}  // namespace

TEST_CASE("search finds the better move facing a bet: call with the king, fold with the jack") {
  const KuhnGame game;
  FixedNets nets({0.0F, 0.0F}, 0.0F);
  const float probs[2] = {0.5F, 0.5F};
  const SearchSettings o{.top_k = 2, .deals = 8, .depth = 0, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1};
  // Player 0 passed, player 1 bet: player 0 to call (bet, +2 with the king) or fold (pass, −1).
  const SearchResult king = determinized_search(game, kuhn_position(2, 0, {kuhn::kPass, kuhn::kBet}), 0, probs, o, 7, nets);
  CHECK(king.candidates == 2);
  CHECK(king.action == kuhn::kBet);
  // With the jack every deal loses a call (−2): fold (−1).
  const SearchResult jack = determinized_search(game, kuhn_position(0, 2, {kuhn::kPass, kuhn::kBet}), 0, probs, o, 7, nets);
  CHECK(jack.action == kuhn::kPass);
  CHECK(jack.moves == 0);  // both candidates end the game: nothing to roll out
}

TEST_CASE("the prior keeps the network's move unless the evidence beats it") {
  const KuhnGame game;
  FixedNets nets({0.0F, 0.0F}, 0.0F);
  const float probs[2] = {0.9F, 0.1F};  // the network folds the king
  const kuhn::State s = kuhn_position(2, 0, {kuhn::kPass, kuhn::kBet});
  SearchSettings o{.top_k = 2, .deals = 4, .depth = 0, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1};
  CHECK(determinized_search(game, s, 0, probs, o, 1, nets).action == kuhn::kBet);  // +2 against −1
  o.prior = 40;                                                                    // 0.9·40 − 1 = 35 against 0.1·40 + 2 = 6
  CHECK(determinized_search(game, s, 0, probs, o, 1, nets).action == kuhn::kPass);
}

TEST_CASE("one candidate is the network's move with no forward") {
  const KuhnGame game;
  FixedNets nets({0.0F, 0.0F}, 0.0F);
  const float probs[2] = {0.3F, 0.7F};
  const SearchSettings o{.top_k = 1, .deals = 64, .depth = 4, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1};
  const SearchResult r = determinized_search(game, kuhn_position(1, 0, {}), 0, probs, o, 3, nets);
  CHECK(r.candidates == 1);
  CHECK(r.action == kuhn::kBet);
  CHECK(r.forwards == 0);
  CHECK(nets.policy_rows + nets.value_rows == 0);
}

TEST_CASE("value leaves are the value network's output times value_scale from the decider's seat") {
  const KuhnGame game;
  const float probs[2] = {0.5F, 0.5F};
  // Player 0 holds the king and acts first; rollouts are greedy and the policy prefers bet, so
  // after "pass" player 1 bets and player 0 is to move (a leaf at depth 1: the value network),
  // after "bet" player 1 calls and the game ends (+2 for the king).
  const kuhn::State s = kuhn_position(2, 0, {});
  const SearchSettings o{.top_k = 2, .deals = 2, .depth = 1, .cap = 200, .prior = 0, .sampled = false, .value_scale = 3};
  FixedNets good({0.0F, 1.0F}, 1.0F);  // the mover's return 1 · 3 = +3 > +2: pass
  const SearchResult r = determinized_search(game, s, 0, probs, o, 5, good);
  CHECK(r.action == kuhn::kPass);
  CHECK(good.value_rows == 2);         // one leaf per deal (after pass)
  CHECK(good.policy_rows == 4);        // one rollout move per candidate and deal
  FixedNets bad({0.0F, 1.0F}, -1.0F);  // −3 < +2: bet
  CHECK(determinized_search(game, s, 0, probs, o, 5, bad).action == kuhn::kBet);
  // From player 1's seat the same leaf (player 0 to move) counts negated.
  FixedNets other({0.0F, 1.0F}, -1.0F);
  const kuhn::State p1 = kuhn_position(0, 2, {kuhn::kPass});  // player 1 (king) to move after a pass
  const SearchSettings o1{.top_k = 2, .deals = 2, .depth = 1, .cap = 200, .prior = 0, .sampled = false, .value_scale = 3};
  // "bet": player 0 (greedy: bet = call) calls, the king wins +2; "pass": showdown, +1. Either
  // way the game ends: no leaf.
  CHECK(determinized_search(game, p1, 1, probs, o1, 5, other).action == kuhn::kBet);
  CHECK(other.value_rows == 0);
}

TEST_CASE("with win_reward a finished rollout counts its return shaped as the value network's targets were") {
  const KuhnGame game;
  const float probs[2] = {0.5F, 0.5F};
  // The position of the case above: "pass" reaches a value leaf (0.8 · 3 = 2.4), "bet" ends the
  // game at +2 for the king. Unshaped, the leaf leads: pass; with win_reward = 1 the won game
  // counts 2 + 1 = 3: bet. The leaf itself is the network's, unchanged.
  const kuhn::State s = kuhn_position(2, 0, {});
  SearchSettings o{.top_k = 2, .deals = 2, .depth = 1, .cap = 200, .prior = 0, .sampled = false, .value_scale = 3};
  FixedNets nets({0.0F, 1.0F}, 0.8F);
  CHECK(determinized_search(game, s, 0, probs, o, 5, nets).action == kuhn::kPass);
  o.win_reward = 1;
  CHECK(determinized_search(game, s, 0, probs, o, 5, nets).action == kuhn::kBet);
  CHECK(win_shaped(-2, 1) == -3);
  CHECK(win_shaped(0, 1) == 0);
}

TEST_CASE("the search depends only on the decision and the seed") {
  const KuhnGame game;
  const float probs[2] = {0.5F, 0.5F};
  const kuhn::State s = kuhn_position(1, 2, {});
  const SearchSettings o{.top_k = 2, .deals = 16, .depth = 0, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1};
  FixedNets a({0.2F, 0.0F}, 0.0F), b({0.2F, 0.0F}, 0.0F);
  const SearchResult x = determinized_search(game, s, 0, probs, o, 11, a), y = determinized_search(game, s, 0, probs, o, 11, b);
  CHECK(x.action == y.action);
  CHECK(x.moves == y.moves);
  CHECK(a.policy_rows == b.policy_rows);
  CHECK(a.policy_rows > 0);
}

TEST_CASE("the improved policy moves probability toward the better candidate and is the policy when values tie") {
  SearchResult r;
  r.candidates = 2;
  r.candidate = {1, 0};
  r.value = {2.0, -1.0};  // action 1: +2, action 0: −1
  const float probs[3] = {0.5F, 0.3F, 0.2F};
  const ActionMask legal = 0b111;
  float out[3];
  improved_policy(probs, legal, 3, r, 1.0, out);
  // q̄ = (0.3·2 + 0.5·(−1)) / 0.8 = 0.125; weights 0.5·e^(−1.125), 0.3·e^(1.875), 0.2.
  const double w0 = 0.5 * std::exp(-1.125), w1 = 0.3 * std::exp(1.875), w2 = 0.2, z = w0 + w1 + w2;
  CHECK(out[0] == doctest::Approx(w0 / z));
  CHECK(out[1] == doctest::Approx(w1 / z));
  CHECK(out[2] == doctest::Approx(w2 / z));
  CHECK(out[1] > probs[1]);
  r.value = {0.7, 0.7};
  improved_policy(probs, legal, 3, r, 1.0, out);
  for (int a = 0; a < 3; ++a) CHECK(out[a] == doctest::Approx(probs[a]));
  improved_policy(probs, 0b011, 3, r, 1.0, out);  // off the legal set: 0
  CHECK(out[2] == 0.0F);
  CHECK(out[0] + out[1] == doctest::Approx(1.0));
}

TEST_CASE("the paired test lets a move override the network's only when its lead is consistent across the deals") {
  const std::array<int, 2> cand{0, 1};
  const float probs[2] = {0.6F, 0.4F};
  SearchTally noisy;  // candidate 1 leads by 1 on average, by +11 or −9 deal by deal
  for (int j = 0; j < 8; ++j) noisy.add_deal(std::array<double, 2>{0.0, j % 2 == 0 ? 11.0 : -9.0});
  CHECK(noisy.mean(1) == doctest::Approx(1.0));
  CHECK(noisy.paired_z(1) == doctest::Approx(1.0 / std::sqrt(800.0 / 7 / 8)));  // sample variance 100·8/7
  CHECK(search_choice(noisy, cand, probs, 0, 0) == 1);                          // no test: the higher mean
  CHECK(search_choice(noisy, cand, probs, 0, 1) == 0);                          // 0.26 standard errors: not enough
  SearchTally steady;                                                           // the same mean lead, deal by deal +0.5 or +1.5
  for (int j = 0; j < 8; ++j) steady.add_deal(std::array<double, 2>{10.0 * j, 10.0 * j + (j % 2 == 0 ? 0.5 : 1.5)});
  CHECK(steady.paired_z(1) > 5);  // the deals' own spread (0 to 70) cancels in the pairs
  CHECK(search_choice(steady, cand, probs, 0, 3) == 1);
  CHECK(search_choice(steady, cand, probs, 10, 3) == 0);  // the test is on top of the prior: 35 + 6 against 36 + 4
  SearchTally behind;                                     // a consistent loss never overrides
  for (int j = 0; j < 4; ++j) behind.add_deal(std::array<double, 2>{1.0, 0.0});
  CHECK(behind.paired_z(1) == -std::numeric_limits<double>::infinity());
  CHECK(search_choice(behind, cand, probs, 0, 1) == 0);
}

TEST_CASE("determinized search with a paired test overrides on a lead every deal shows") {
  const KuhnGame game;
  FixedNets nets({0.0F, 0.0F}, 0.0F);
  const float probs[2] = {0.9F, 0.1F};  // the network folds the king
  const kuhn::State s = kuhn_position(2, 0, {kuhn::kPass, kuhn::kBet});
  SearchSettings o{.top_k = 2, .deals = 4, .depth = 0, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1, .z = 50};
  const SearchResult r = determinized_search(game, s, 0, probs, o, 1, nets);
  CHECK(r.action == kuhn::kBet);  // +2 against −1 on every deal: the difference has no spread
  CHECK(r.value[0] == doctest::Approx(-1.0));
  CHECK(r.value[1] == doctest::Approx(2.0));
}
