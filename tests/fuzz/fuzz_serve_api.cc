// Fuzz target: cfr-serve's API parsers (apps/serve/api.h). The first byte picks the parser: a new
// game's body, a move's body, a request target with its query, a Host header, or a transcript
// upload (plain or gzip, under small limits). Every input is accepted or refused with an ApiError
// whose status is a 4xx; anything else is a finding.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/serve/api.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = cfr::fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 5) {
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
      case 3: {
        const auto hp = cfr::serve::parse_host_header(text);
        if (hp && (hp->host.empty() || (hp->port && (*hp->port < 1 || *hp->port > 65535)))) std::abort();
        if (hp) (void)cfr::serve::is_loopback_host(hp->host);
        break;
      }
      case 4: {
        cfr::serve::ReplayLimits limits;
        limits.max_bytes = 1 << 20;
        limits.max_games = 16;
        limits.max_actions = 2000;
        limits.max_seconds = 2;
        const auto j = cfr::serve::parse_replay_upload(text, 0, limits);
        if (!j.contains("frames") || j["frames"].empty()) std::abort();
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
