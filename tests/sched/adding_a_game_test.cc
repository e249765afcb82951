// A game added outside the engine (tests/engine/games/high_low.h, docs/adding-a-game.md) gets the
// engine's generic machinery from its concepts and one registration: the conformance suite, name
// dispatch, its exact tree and tabular CFR, and coroutine traversals under every scheduler.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/tabular_cfr.h"
#include "tests/engine/games/conformance.h"
#include "tests/engine/games/high_low.h"
#include "tests/sched/helpers.h"

using namespace cfr;
using cfr::testing::HighLow;

namespace {

using WithHighLow = ExtendedGames<BuiltinGames, GameRegistration<HighLow, SmallTraversalGame<HighLow>>>;

}  // namespace

TEST_CASE("adding a game: the conformance suite, hidden-information check included") {
  cfr::testing::run_conformance<HighLow>(
      [](int, Rng& rng) {
        HighLow s = HighLow::initial();
        SmallTraversalGame<HighLow>::resolve_chance(s, rng);
        return s;
      },
      {.games = 200}, [](const HighLow&, int, const HighLow&) {});
}

TEST_CASE("adding a game: one registration gives name dispatch, its tree and widths") {
  const auto names = game_names<WithHighLow>();
  CHECK(std::find(names.begin(), names.end(), "high_low") != names.end());
  CHECK(enumerable_game_names<WithHighLow>() == std::vector<std::string>{"kuhn", "leduc", "high_low"});
  CHECK(is_enumerable<WithHighLow>("high_low"));
  CHECK(traversal_widths<WithHighLow>("high_low", {}) == std::pair<int, int>{5, 2});
  const GameTree tree = build_game_tree<WithHighLow>("high_low");
  CHECK(tree.num_infosets() == 4);  // H, L for player 0; Hb, Lb for player 1 (a check ends the hand)
  // The built-in registry does not know it: an unknown name lists the registered games.
  CHECK_THROWS_WITH_AS(build_game_tree("high_low"), "unknown game 'high_low'; valid games: lost_cities, kuhn, leduc", InputError);
}

TEST_CASE("adding a game: tabular CFR+ solves it exactly") {
  const GameTree tree = build_game_tree<WithHighLow>("high_low");
  TabularSolver solver(tree, {.algo = TabularAlgo::kCfrPlus});
  for (int i = 0; i < 2000; ++i) solver.run_iteration();
  const auto r = exploitability(solver.average_policy());
  MESSAGE("high_low: NashConv ", r.nash_conv, " after 2000 CFR+ iterations; value for player 0 ", r.on_policy_value[0]);
  CHECK(r.nash_conv < 1e-3);
}

TEST_CASE("adding a game: coroutine traversals give the same samples under every scheduler") {
  register_builtin_schedulers();
  const SmallTraversalGame<HighLow> game;
  const auto nets = cfr::testing::hash_nets(game.input_width(), game.num_actions());
  for (const TraversalKind kind : {TraversalKind::kOutcomeSampling, TraversalKind::kExternalSampling}) {
    const TraversalOptions options{.kind = kind, .opponent = OpponentPolicy::kNetwork};  // the job refers to it
    const TraversalJob job = cfr::testing::make_job(game, options, 64, 2, 1);
    cfr::testing::CollectingSink reference(game.input_width(), game.num_actions());
    make_scheduler("recursive", {})->run(job, nets.span(), reference);
    REQUIRE(reference.advantage.size() > 0);
    for (const auto& name : scheduler_names()) {
      CAPTURE(name);
      cfr::testing::CollectingSink got(game.input_width(), game.num_actions());
      make_scheduler(name, cfr::testing::declared_options(name, {{"window", 7}, {"max_batch", 5}, {"threads", 2}}))
          ->run(job, nets.span(), got);
      CHECK(cfr::testing::same_samples(got.advantage, reference.advantage));
      CHECK(cfr::testing::same_samples(got.strategy, reference.strategy));
    }
  }
}
