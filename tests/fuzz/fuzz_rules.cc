// Fuzz target: cfr-arena's `--rules` JSON (knob overrides, validated). Accepted rules deal a game
// that two heuristic bots play (at most 2,000 steps), the state's invariants (scores recomputed
// from scratch among them) checked after every step: knob combinations the parser lets through
// must hold up in dealing, the bots and scoring too.
#include <array>

#include "engine/core/rng.h"
#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"
#include "engine/games/replay.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cfr::fuzz::accept_or_clear_error([&] {
    const cfr::lc::Rules rules = cfr::lc::rules_from_json_text(cfr::fuzz::as_text(data, size), "--rules");
    const auto bots =
        std::array{cfr::lc::make_bot("heuristic_aggressive", rules), cfr::lc::make_bot("heuristic_balanced", rules)};
    cfr::Rng rng(1);
    cfr::lc::State s = cfr::lc::State::deal(rules, 0);
    s.check_invariants();
    for (int step = 0; step < 2000 && !s.is_terminal(); ++step) {
      s.apply_action(bots[static_cast<std::size_t>(s.current_player())]->choose_action(s, rng));
      s.check_invariants();
    }
  });
}
