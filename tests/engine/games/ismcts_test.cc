// ismcts (engine/games/ismcts_bot.h): legal, reproducible, a real search, and its spec checked.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/ismcts_bot.h"
#include "engine/games/match.h"

using namespace cfr::lc;
using cfr::Rng;

namespace {

// The moves of one game in which `bot` plays both seats, from the deal `seed` and an RNG seeded `rng_seed`.
std::vector<int> self_play(Bot& bot, const Rules& r, std::uint64_t seed, std::uint64_t rng_seed) {
  State s = State::deal(r, seed);
  Rng rng(rng_seed);
  std::vector<int> moves;
  for (int step = 0; step < 2000 && !s.is_terminal(); ++step) {
    const int a = bot.choose_action(s, rng);
    INFO("deal ", seed, " step ", step);
    REQUIRE(cfr::mask_has(s.legal_mask(), a));
    s.apply_action(a);
    moves.push_back(a);
  }
  CHECK(s.is_terminal());
  return moves;
}

}  // namespace

TEST_CASE("ismcts plays legal moves on every rule set tried and a game is reproducible from its rng") {
  for (const Rules& r : {Rules{}, Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5},
                         Rules{.n_colors = 7, .n_ranks = 12, .n_handshakes = 0, .hand_size = 12, .bonus_threshold = 3},
                         // the largest rules: the largest move keys (the top card byte, the last pile)
                         Rules{.n_colors = 8, .n_ranks = 12, .n_handshakes = 4, .hand_size = 12}}) {
    auto bot = make_bot("ismcts?iters=24&rollout=random&bias=0", r);
    CHECK(bot->name() == "ismcts?iters=24&rollout=random&bias=0");
    CHECK_FALSE(bot->deterministic());
    const auto a = self_play(*bot, r, 5, 1);
    CHECK(self_play(*bot, r, 5, 1) == a);  // the tree is rebuilt every decision: nothing carries over
    CHECK(self_play(*bot, r, 5, 2) != a);  // other deals and rollouts, other moves
  }
}

TEST_CASE("ismcts with a single legal move plays it") {
  const Rules r;
  State s = State::deal(r, 3);
  s.apply_action(1);  // seat 0 discards slot 0: only the deck may be drawn (the pile just fed is barred)
  REQUIRE(cfr::mask_count(s.legal_mask()) == 1);
  auto bot = make_bot("ismcts?iters=1", r);
  Rng rng(0);
  CHECK(bot->choose_action(s, rng) == r.draw_deck_action());
}

TEST_CASE("ismcts searches: more iterations beat fewer and both beat random") {
  const Rules r;
  auto random = make_bot("random", r);
  auto small = make_bot("ismcts?iters=8&rollout=random&bias=0", r);
  auto big = make_bot("ismcts?iters=200&rollout=random&bias=0", r);
  const auto vs_random = run_match(*big, *random, {.games = 10, .seed = 4});
  CHECK(vs_random.wins >= 9);
  CHECK(vs_random.diff_sum > 0);
  const auto vs_small = run_match(*big, *small, {.games = 10, .seed = 4});
  INFO("200 against 8 iterations: ", vs_small.wins, " wins, ", vs_small.diff_sum, " points");
  CHECK(vs_small.wins >= 6);
  CHECK(vs_small.diff_sum > 0);
}

TEST_CASE("ismcts's progressive bias tries the rollout bot's move first") {
  // One iteration adds one child to the root: under the bias it is the rollout bot's move, so the
  // game is heuristic_expert's own; without it a uniformly drawn move, another game.
  const Rules r;
  auto expert = make_bot("heuristic_expert", r);
  auto biased = make_bot("ismcts?iters=1&rollout=heuristic_expert&bias=1", r);
  auto plain = make_bot("ismcts?iters=1&rollout=heuristic_expert&bias=0", r);
  for (const std::uint64_t seed : {1, 2}) {
    const auto own = self_play(*expert, r, seed, 1);
    CHECK(self_play(*biased, r, seed, 1) == own);
    CHECK(self_play(*plain, r, seed, 1) != own);
  }
}

TEST_CASE("ismcts's search without a prior is the bot and a root prior steers it") {
  const Rules r;
  const IsmctsParams p = parse_ismcts_params("iters=60&rollout=heuristic_balanced");
  IsmctsSearch search(r, p);
  auto bot = make_ismcts_bot(r, p);
  int steered = 0, differ = 0;
  for (const std::uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    State s = State::deal(r, seed);
    for (int step = 0; step < 6; ++step) s.apply_action(std::countr_zero(s.legal_mask()));  // a few plays and draws in
    REQUIRE(s.phase() == Phase::kCard);
    Rng a(seed), b(seed);
    INFO("deal ", seed);
    const int plain = search.decide(s, a);
    CHECK(plain == bot->choose_action(s, b));  // the same search, the same RNG: the same move
    // A prior on another move than the search's (the lowest legal id holding another card, so the
    // lowest slot of its move): with a weight of 100 the root spends its iterations there.
    std::array<float, cfr::kMaxActionsAnyGame> prior{};
    const int me = s.current_player();
    int target = -1;
    for (cfr::ActionMask m = s.legal_mask(); m != 0 && target < 0; m &= m - 1)
      if (const int x = std::countr_zero(m); s.hand_card(me, x / 2).v != s.hand_card(me, plain / 2).v) target = x;
    REQUIRE(target >= 0);
    prior[static_cast<std::size_t>(target)] = 1;
    Rng c(seed), d(seed);
    const int heavy = search.decide(s, c, prior.data(), 100);
    steered += heavy == target;
    CHECK(heavy == search.decide(s, d, prior.data(), 100));  // reproducible from its RNG
    Rng e(seed);
    differ += search.decide(s, e, prior.data(), 0) != heavy;  // weight 0: no prior (the rollout bot's bias at the root)
  }
  CHECK(steered == 6);
  CHECK(differ == 6);
}

TEST_CASE("ismcts's spec is named by it and refused with the key and the range") {
  const Rules r;
  CHECK(names_bot("ismcts"));
  CHECK(names_bot("ismcts?iters=5"));
  CHECK_FALSE(names_bot("ismctsx"));
  CHECK(make_bot("ismcts", r)->name() == "ismcts");
  const IsmctsParams p = parse_ismcts_params("iters=50&c=1.5&rollout=heuristic_expert&cap=30&value=win&scale=40&bias=2");
  CHECK(p.bias == 2);
  // The defaults: the strongest setting measured (docs/strength.md).
  const IsmctsParams d;
  CHECK(d.iters == 1000);
  CHECK(d.c == 0.2);
  CHECK(d.rollout == "heuristic_expert");
  CHECK(d.bias == 1);
  CHECK(d.value == "diff");
  CHECK(p.iters == 50);
  CHECK(p.c == 1.5);
  CHECK(p.rollout == "heuristic_expert");
  CHECK(p.cap == 30);
  CHECK(p.value == "win");
  CHECK(p.scale == 40);
  const auto refused = [&](const char* spec, const char* message) {
    INFO(spec);
    CHECK_THROWS_WITH_AS(make_bot(spec, r), doctest::Contains(message), cfr::InputError);
  };
  refused("ismcts?iters=0", "iters=0: must be an integer in [1, 200000]");
  refused("ismcts?iters=2.5", "iters=2.5: must be an integer");
  refused("ismcts?c=nan", "c=nan: must be a number in [0, 100]");
  refused("ismcts?rollout=ismcts", "rollout=ismcts: must be a rule bot");
  refused("ismcts?rollout=alphazero", "rollout=alphazero: must be a rule bot");
  refused("ismcts?value=points", "value=points: must be diff or win");
  refused("ismcts?depth=3", "unknown key 'depth' (keys: iters, c, rollout, cap, value, scale, bias)");
  refused("ismcts?bias=-1", "bias=-1: must be a number in [0, 100]");
  refused("ismcts?iters=5&iters=6", "key 'iters' given twice");
  refused("ismcts?", "no key=value after the '?'");
  refused("ismcts?rollout=heuristic_expert?deny=99", "deny=99: must be a number in [0, 10]");
}
