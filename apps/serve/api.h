#pragma once
// cfr-serve's API messages without the server: request bodies and targets parsed (every bad input an
// ApiError with its HTTP status and a message naming the field), and the board views the pages draw.
// No Beast, no LibTorch: the fuzz target (tests/fuzz/fuzz_serve_api.cc) drives these directly.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/games/lost_cities.h"

namespace cfr::serve {

/// A request the API refuses: `status` is the HTTP status (400, 404, 409, 413, 422, 503).
struct ApiError : std::runtime_error {
  ApiError(int http_status, const std::string& what) : std::runtime_error(what), status(http_status) {}
  int status;
};

/// POST /api/games: {"opponent": NAME, "seat": 0|1, "seed": N} (seat and seed optional).
struct NewGameRequest {
  std::string opponent;
  int seat = 0;
  std::optional<std::uint64_t> seed;
};
NewGameRequest parse_new_game(std::string_view body);

/// POST /api/games/ID/move: {"action": ID}; 400 unless an integer in [0, action_size).
int parse_move(std::string_view body, int action_size);

/// A request target's path split into its segments (percent-decoding refused: ids and names are
/// plain) and its query string. ApiError 400 for "..", ".", empty segments inside the path, a
/// backslash or a control character: nothing outside the served folders can be named.
struct Target {
  std::vector<std::string> segments;
  std::string query;
};
Target parse_target(std::string_view target);

/// The value of `key` in a query string "a=1&b=2", if present.
std::optional<std::string> query_value(std::string_view query, std::string_view key);

/// A card for the pages: {"name": "c0:7", "color": 0, "face": 7, "wager": false}.
nlohmann::json card_json(const lc::Rules& rules, lc::Card card);

/// What the player in `seat` sees: own hand, both expeditions (cards and scores per color), the
/// discard piles' tops and sizes, deck size, totals, phase, whose turn, legal actions when it is
/// theirs. Never the opponent's hand or the deck's order.
nlohmann::json seat_view(const lc::State& s, int seat);

/// Everything (a replay's view): both hands, expeditions, piles, deck size, totals, phase, mover.
nlohmann::json full_view(const lc::State& s);

/// Per color, both players' expedition scores (the end-of-game breakdown).
nlohmann::json score_breakdown(const lc::State& s, int seat);

}  // namespace cfr::serve
