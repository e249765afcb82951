// Fuzz target: the replay reader. Each line is parsed as a transcript game and replayed (rules,
// deck, actions, bot checks and recorded totals), as cfr-arena --replay --check-bots does.
#include <algorithm>
#include <string>

#include "engine/games/replay.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = cfr::fuzz::as_text(data, size);
  int line = 0, index = 0;
  std::size_t start = 0;
  while (start <= text.size() && line < 64) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view one = text.substr(start, end - start);
    ++line;
    start = end + 1;
    if (one.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    cfr::fuzz::accept_or_clear_error([&] {
      const cfr::lc::ReplayGame g = cfr::lc::parse_replay_line(one, line, index, "fuzz.jsonl");
      cfr::lc::replay_game(g, {.check_bots = true}, "fuzz.jsonl");
    });
    ++index;
  }
  return 0;
}
