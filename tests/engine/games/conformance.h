#pragma once
// The conformance suite every game of the engine passes (OpenSpiel's random-playout tests):
// along random playouts it checks the state's own invariants (check_invariants), that the
// legal mask agrees with what apply_action accepts, that terminal states have no legal action
// and zero-sum returns, and — for games that can resample what an observer cannot see — that
// the information-state encoding of the player to move (what every network query encodes) never
// reads information that player cannot see. A game-specific `after_step` hook adds checks of its
// own (Lost Cities checks the non-moving observer there, see conformance_test.cc).
#include <doctest/doctest.h>

#include <vector>

#include "engine/core/errors.h"
#include "engine/core/game.h"
#include "engine/core/rng.h"

namespace cfr::testing {

struct ConformanceOptions {
  int games = 200;
  std::uint64_t seed = 1;
  int max_steps = 5000;
  int hidden_info_checks_per_game = 8;  // states per game where the encoding is compared
};

template <GameState S, class MakeState, class AfterStep>
void run_conformance(MakeState make_state, const ConformanceOptions& o, AfterStep after_step) {
  Rng rng(o.seed);
  long steps = 0;
  for (int g = 0; g < o.games; ++g) {
    S s = make_state(g, rng);
    const int n_actions = s.num_distinct_actions();
    REQUIRE(n_actions <= kMaxActionsAnyGame);
    std::vector<float> enc(static_cast<std::size_t>(s.info_state_size()));
    std::vector<float> enc2(enc.size());
    for (int step = 0; step < o.max_steps && !s.is_terminal(); ++step, ++steps) {
      INFO("game ", g, " step ", step);
      REQUIRE_NOTHROW(s.check_invariants());
      if constexpr (EnumerableGame<S>) {
        if (s.is_chance_node()) {
          // Chance: outcomes form a distribution, the mask is their set, apply accepts exactly it.
          ChanceOutcome out[kMaxChanceOutcomes];
          const int k = s.chance_outcomes(out);
          REQUIRE(k > 0);
          double total = 0;
          ActionMask m = 0;
          for (int i = 0; i < k; ++i) total += out[i].prob, m |= ActionMask{1} << out[i].action;
          CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
          CHECK(s.legal_mask() == m);
          CHECK(s.current_player() == kChancePlayer);
          for (int a = -1; a < kMaxActionsAnyGame; ++a) {
            S t = s;
            if (a >= 0 && mask_has(m, a)) {
              CHECK_NOTHROW(t.apply_action(a));
            } else {
              CHECK_THROWS_AS(t.apply_action(a), IllegalActionError);
            }
          }
          const int pick = pick_chance_outcome(std::span<const ChanceOutcome>(out, static_cast<std::size_t>(k)), rng.uniform());
          const S before = s;
          s.apply_action(pick);
          after_step(before, pick, s);
          continue;
        }
      }
      const ActionMask legal = s.legal_mask();
      REQUIRE(legal != 0);
      REQUIRE((legal >> n_actions) == 0);
      // The mask agrees with what apply_action accepts, for every id and a few out of range.
      for (int a = -1; a <= n_actions; ++a) {
        S t = s;
        if (a >= 0 && mask_has(legal, a)) {
          CHECK_NOTHROW(t.apply_action(a));
        } else {
          CHECK_THROWS_AS(t.apply_action(a), IllegalActionError);
          CHECK(t == s);  // a rejected action leaves the state untouched
        }
      }
      // The encoding depends only on what the observer knows (resample_hidden is part of the
      // GameState concept: every game is checked).
      if (step % (1 + o.max_steps / (8 * o.hidden_info_checks_per_game)) == 0) {
        const int observer = s.current_player();
        s.encode_info_state(observer, enc);
        S t = s;
        t.resample_hidden(observer, rng);
        REQUIRE_NOTHROW(t.check_invariants());
        t.encode_info_state(observer, enc2);
        CHECK(enc == enc2);
      }
      const int a = mask_nth(legal, static_cast<int>(rng.below(static_cast<std::uint32_t>(mask_count(legal)))));
      const S before = s;
      s.apply_action(a);
      after_step(before, a, s);
    }
    REQUIRE_NOTHROW(s.check_invariants());
    if (s.is_terminal()) {
      CHECK(s.legal_mask() == 0);
      CHECK(s.returns(0) == -s.returns(1));
      for (int a = 0; a < n_actions; ++a) {
        S t = s;
        CHECK_THROWS_AS(t.apply_action(a), IllegalActionError);
      }
    }
  }
  MESSAGE("conformance: ", o.games, " games, ", steps, " steps");
}

}  // namespace cfr::testing
