#include "tests/engine/games/conformance.h"

#include <vector>

#include "engine/games/lost_cities.h"

using namespace cfr::lc;
using cfr::Rng;

namespace {

// Lost Cities' own checks along the playout: a draw ends the game exactly when it empties the
// deck; card actions never end it; the scores seen by returns() are the incremental totals.
void lost_cities_step_checks(const State& before, int action, const State& after) {
  const bool was_draw = before.phase() == Phase::kDraw;
  CHECK(after.move_count() == before.move_count() + 1);
  if (!was_draw) {
    CHECK_FALSE(after.is_terminal());
    CHECK(after.phase() == Phase::kDraw);
    CHECK(after.hand_size(before.current_player()) == before.hand_size(before.current_player()) - 1);
  } else {
    CHECK(after.is_terminal() == (after.deck_size() == 0));
    CHECK(after.deck_size() == before.deck_size() - (action == before.rules().draw_deck_action() ? 1 : 0));
    CHECK(after.turn_count() == before.turn_count() + 1);
    if (!after.is_terminal()) CHECK(after.current_player() == 1 - before.current_player());
  }
  CHECK(after.returns(0) == after.total(0) - after.total(1));
  // The non-moving observer's encoding never reads hidden cards either, except through the
  // legal-mask block, which (as in the reference and its golden encodings) is the mover's mask and
  // so reveals which of the mover's slots are playable. Every other block must be unchanged.
  if (!after.is_terminal() && after.move_count() % 7 == 0) {
    static Rng rng(99);
    const int observer = 1 - after.current_player();
    std::vector<float> a(static_cast<std::size_t>(after.info_state_size())), b(a.size());
    after.encode_info_state(observer, a);
    State t = after;
    t.resample_hidden(observer, rng);
    t.encode_info_state(observer, b);
    const Rules& r = after.rules();
    const int mask_begin = 5 + 3 * r.hand_size + 12 * r.n_colors + r.n_colors * (r.n_ranks + 1) + 4 + r.n_colors + 1;
    for (int i = mask_begin; i < mask_begin + r.action_size(); ++i)
      a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i)] = 0;
    CHECK(a == b);
  }
}

void run_lost_cities(const Rules& rules, int games) {
  cfr::testing::run_conformance<State>([&](int g, Rng&) { return State::deal(rules, 1000 + static_cast<std::uint64_t>(g)); },
                                       cfr::testing::ConformanceOptions{.games = games, .seed = 17, .max_steps = 3000},
                                       lost_cities_step_checks);
}

}  // namespace

TEST_CASE("Lost Cities with the default rules passes the conformance suite") { run_lost_cities(Rules{}, 60); }

TEST_CASE("Lost Cities with the small golden rules passes the conformance suite") {
  run_lost_cities(Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5}, 60);
}

TEST_CASE("Lost Cities passes the conformance suite on random valid rule sets") {
  Rng rng(123);
  int tried = 0;
  for (int k = 0; k < 40; ++k) {
    Rules r{.n_colors = 1 + static_cast<int>(rng.below(kMaxColors)),
            .n_ranks = 1 + static_cast<int>(rng.below(kMaxRanks)),
            .min_rank = 1 + static_cast<int>(rng.below(4)),
            .n_handshakes = static_cast<int>(rng.below(kMaxHandshakes + 1)),
            .hand_size = 1 + static_cast<int>(rng.below(kMaxHandSize)),
            .expedition_penalty = -static_cast<int>(rng.below(30)),
            .bonus_threshold = 1 + static_cast<int>(rng.below(10)),
            .bonus_amount = static_cast<int>(rng.below(30))};
    if (r.deck_size() <= 2 * r.hand_size) continue;
    INFO("rules n_colors ", r.n_colors, " n_ranks ", r.n_ranks, " handshakes ", r.n_handshakes, " hand ", r.hand_size);
    run_lost_cities(r, 3);
    ++tried;
  }
  CHECK(tried >= 15);
}
