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
#include "engine/traversal/turn_tree.h"
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

// The tree over the turn (engine/traversal/turn_tree.h, the search player's sims=S).
namespace {

std::array<float, kMaxTraversalActions> tree_probs(std::initializer_list<std::pair<int, float>> p) {
  std::array<float, kMaxTraversalActions> out{};
  for (auto [a, x] : p) out[static_cast<std::size_t>(a)] = x;
  return out;
}

}  // namespace

TEST_CASE("the turn tree selects below the root by the prior first and a wave spreads") {
  TurnTree t;
  const auto p = tree_probs({{0, 0.2F}, {2, 0.7F}, {5, 0.1F}});
  t.reset(7, 0b100101, p.data());
  CHECK(t.select(0, 20.0) == 2);  // no visits: the most probable
  // Virtual visits: the in-flight pick counts, so the next picks go elsewhere before any returns.
  std::vector<int> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(t.select(0, 20.0));
  CHECK(std::count(picks.begin(), picks.end(), 0) >= 1);
  CHECK(t.node(0).inflight == 7);
  // The root's deals: the j-th simulation through a move draws deal j, whatever the other moves.
  TurnTree r;
  r.reset(7, 0b100101, p.data());
  CHECK(r.take_root(2) == 0);
  CHECK(r.take_root(0) == 0);
  CHECK(r.take_root(2) == 1);
  CHECK(r.node(0).v[2] == 2);
}

TEST_CASE("the turn tree backs a value up its path through the turn and halving keeps the better moves") {
  TurnTree t;
  const auto p = tree_probs({{0, 0.5F}, {1, 0.3F}, {4, 0.2F}});
  t.reset(1, 0b10011, p.data());
  const auto q = tree_probs({{3, 1.0F}});
  // Move 1 leads to a node of the same turn (key 9); moves 0 and 4 end the turn.
  std::vector<int> in{0, 1, 4};
  for (int deal = 0; deal < 10; ++deal)
    for (int a : in) {
      REQUIRE(t.take_root(a) == deal);
      std::vector<TurnEdge> path{{0, a}};
      if (a == 1) {
        const int child = t.has_child(0, 1) ? t.child(0, 1, 9) : t.expand(0, 1, 9, 0b1000, q.data());
        REQUIRE(child == 1);
        path.push_back({child, t.select(child, 5.0)});
      }
      t.backup(path, deal, a == 1 ? 10.0 : (a == 4 ? 4.0 : 0.0));  // move 1 worth 10, 4 worth 4, 0 nothing
    }
  CHECK(t.size() == 2);
  CHECK(t.child(0, 1, 8) == kNoNode);  // another information state: not this node
  CHECK(t.node(0).visits == 30);
  CHECK(t.node(1).visits == 10);
  CHECK(t.node(1).w[3] == doctest::Approx(100.0));
  CHECK(t.mean(4) == doctest::Approx(4.0));
  t.halve(in);
  CHECK(in == std::vector<int>{1, 4});  // the better half, rounded up, in the prior's order
  t.halve(in);
  CHECK(in == std::vector<int>{1});
  CHECK(t.paired_z(1, 0) == std::numeric_limits<double>::infinity());  // the same lead on every common deal
  CHECK(t.choose(1, 0, 1000.0) == 1);
  CHECK(t.choose(0, 0, 1000.0) == 0);
}

TEST_CASE("the turn tree's paired test keeps the network's move against a lead the common deals do not confirm") {
  TurnTree t;
  const auto p = tree_probs({{0, 0.6F}, {1, 0.4F}});
  t.reset(1, 0b11, p.data());
  // Deal j: move 0 is ±20 with the deal, move 1 one more on even deals and half less on odd ones.
  for (int deal = 0; deal < 60; ++deal)
    for (int a : {0, 1}) {
      REQUIRE(t.take_root(a) == deal);
      const double base = deal % 2 == 0 ? 20.0 : -20.0;
      const std::array<TurnEdge, 1> path{TurnEdge{0, a}};
      t.backup(path, deal, a == 0 ? base : base + (deal % 2 == 0 ? 1.0 : -0.5));
    }
  const double z = t.paired_z(1, 0);  // mean 0.25, sd 0.76 over 60 deals: about 2.5
  CHECK(z > 2.0);
  CHECK(z < 3.0);
  CHECK(t.choose(1, 0, z + 0.01) == 0);  // the test keeps the network's move
  CHECK(t.choose(1, 0, z - 0.01) == 1);
  CHECK(t.choose(1, 0, 0.0) == 1);  // no test
}
