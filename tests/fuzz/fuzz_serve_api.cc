// Fuzz target: cfr-serve's API parsers (apps/serve/api.h). The first byte picks the parser: a new
// game's body, a move's body, or a request target with its query. Every input is accepted or
// refused with an ApiError whose status is a 4xx; anything else is a finding.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/serve/api.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = cfr::fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        const auto r = cfr::serve::parse_new_game(text);
        if (r.opponent.empty() || (r.seat != 0 && r.seat != 1)) std::abort();
        break;
      }
      case 1: {
        const int a = cfr::serve::parse_move(text, 22);
        if (a < 0 || a >= 22) std::abort();
        break;
      }
      default: {
        const auto t = cfr::serve::parse_target(text);
        for (const auto& s : t.segments)
          if (s.empty() || s == "." || s == ".." || s.find('/') != std::string::npos) std::abort();
        (void)cfr::serve::query_value(t.query, "game");
      }
    }
  } catch (const cfr::serve::ApiError& e) {
    if (e.status < 400 || e.status > 499) {
      std::fprintf(stderr, "fuzz: ApiError with status %d: %s\n", e.status, e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than ApiError escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
