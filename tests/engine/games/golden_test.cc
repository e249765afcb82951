// The reference's own transcripts (tests/golden/): rules, bots and encodings must match exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/games/bots.h"
#include "engine/games/replay.h"

using namespace cfr::lc;

namespace {

std::string golden(const char* name) { return std::string(CFR_TEST_DATA_DIR) + "/golden/" + name; }

void replay_all(const char* file, int expected_games, const std::vector<std::string>& bots_to_check) {
  const auto games = read_replay_file(golden(file));
  REQUIRE(static_cast<int>(games.size()) == expected_games);
  std::map<std::string, int> checked_moves;
  for (const auto& g : games) {
    REQUIRE(g.legal_counts.has_value());
    REQUIRE(g.totals.has_value());
    REQUIRE(g.terminal.has_value());
    // Count the deterministic bots' moves so the test proves it checked them.
    std::array<bool, 2> det{};
    for (int b = 0; b < 2; ++b) det[b] = g.bots[b] && make_bot(*g.bots[b], g.rules)->deterministic();
    INFO("game ", g.game, " line ", g.line);
    CHECK_NOTHROW(replay_game(g, ReplayOptions{.check_bots = true}, file, [&](const ReplayStep& st, const State&) {
      if (det[st.player]) ++checked_moves[*g.bots[st.player]];
    }));
  }
  for (const auto& bot : bots_to_check) {
    INFO(bot);
    CHECK(checked_moves[bot] > 100);
  }
  MESSAGE(fmt::format("{}: checked bot moves: discard_only {}, balanced {}, aggressive {}, cautious {}", file,
                      checked_moves["discard_only"], checked_moves["heuristic_balanced"], checked_moves["heuristic_aggressive"],
                      checked_moves["heuristic_cautious"]));
}

void check_encodings(const char* games_file, const char* enc_file, int width) {
  const auto games = read_replay_file(golden(games_file));
  const auto lines = read_lines(golden(enc_file));
  REQUIRE(!lines.empty());
  std::vector<float> out(static_cast<std::size_t>(width));
  int compared = 0;
  for (const auto& line : lines) {
    const auto j = nlohmann::json::parse(line);
    const int game = j["game"], step = j["step"], observer = j["observer"];
    const auto expected = j["features"].get<std::vector<double>>();
    REQUIRE(static_cast<int>(expected.size()) == width);
    const ReplayGame* g = nullptr;
    for (const auto& gg : games)
      if (gg.game == game) g = &gg;
    REQUIRE(g != nullptr);
    State s = State::from_deck(g->rules, g->deck);
    for (int i = 0; i < step; ++i) s.apply_action(g->actions[static_cast<std::size_t>(i)]);
    REQUIRE(s.info_state_size() == width);
    s.encode_info_state(observer, out);
    for (int k = 0; k < width; ++k) {
      if (std::abs(out[static_cast<std::size_t>(k)] - expected[static_cast<std::size_t>(k)]) > 1e-6) {
        FAIL(fmt::format("{}: game {} step {} observer {}: feature {} is {}, golden {}\n{}", enc_file, game, step, observer, k,
                         out[static_cast<std::size_t>(k)], expected[static_cast<std::size_t>(k)], s.to_string()));
      }
    }
    ++compared;
  }
  MESSAGE(fmt::format("{}: {} encodings match to 1e-6", enc_file, compared));
}

}  // namespace

TEST_CASE("every golden game with default rules replays exactly, bots included") {
  replay_all("games.jsonl.gz", 120, {"discard_only", "heuristic_balanced", "heuristic_aggressive", "heuristic_cautious"});
}

TEST_CASE("every golden game with small rules replays exactly, bots included") {
  replay_all("games_small_rules.jsonl", 20, {"heuristic_balanced"});
  // 226 heuristic_balanced moves in this file.
}

TEST_CASE("every golden encoding with default rules matches to 1e-6") {
  check_encodings("games.jsonl.gz", "encodings.jsonl.gz", 297);
}

TEST_CASE("every golden encoding with small rules matches to 1e-6") {
  check_encodings("games_small_rules.jsonl", "encodings_small_rules.jsonl.gz", 177);
}
