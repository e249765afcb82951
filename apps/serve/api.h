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

/// The search player's parameters a request may set (docs/serve.md, "Security"): each bounded.
struct SearchRequest {
  int k = 3;          // candidates
  int n = 8;          // deals
  int cap = 200;      // moves per rollout
  double prior = 20;  // bonus per unit of network probability
};
struct SearchLimits {
  int max_k = 8, max_n = 64, max_cap = 300;
  double max_prior = 1000;
};

/// POST /api/games: {"opponent": ID, "seat": 0|1, "seed": N, "search": {"k", "n", "cap", "prior"}}
/// (seat, seed and search optional). ID is an entry of GET /api/players, never a program or a path;
/// a search field over its limits is 422.
struct NewGameRequest {
  std::string opponent;
  int seat = 0;
  std::optional<std::uint64_t> seed;
  std::optional<SearchRequest> search;
};
NewGameRequest parse_new_game(std::string_view body, const SearchLimits& limits = {});

/// POST /api/games/ID/move: {"action": ID}; 400 unless an integer in [0, action_size).
int parse_move(std::string_view body, int action_size);

/// A request target's path split into its segments, each percent-decoded (run names may be any
/// UTF-8), and its query string. ApiError 400 for "..", ".", empty segments inside the path, a
/// bad escape, invalid UTF-8, or a decoded '/', '\\' or control character: nothing outside the
/// served folders can be named.
struct Target {
  std::vector<std::string> segments;
  std::string query;
};
Target parse_target(std::string_view target);

/// The value of `key` in a query string "a=1&b=2", if present.
std::optional<std::string> query_value(std::string_view query, std::string_view key);

/// The host of a Host header ("localhost:8080", "[::1]:8080", "127.0.0.1") in lower case without
/// brackets, and its port if one is given; nullopt when it is not a host[:port].
struct HostPort {
  std::string host;
  std::optional<int> port;
};
std::optional<HostPort> parse_host_header(std::string_view value);
/// An IPv4 or IPv6 address literal (no brackets).
bool is_ip_literal(std::string_view host);
/// "localhost", 127.0.0.0/8 or ::1.
bool is_loopback_host(std::string_view host);

/// What POST /api/replay accepts (docs/serve.md): the decompressed size, a line's length, the games
/// in a file, the actions of a game, and the time its parsing may take. Over them: ApiError 413 or
/// 422 at once.
struct ReplayLimits {
  std::size_t max_bytes = 32u << 20;
  /// One line (one game) before it is parsed: a JSON tree costs up to ~16 times its text ("[[],[],
  /// ...]"), so a line is measured first. The longest legal line is ~83 KB (10,000 actions and
  /// 10,000 legal counts of at most 2 digits, 128 deck ids, two bot specs of ~1,000 characters,
  /// written with ", " separators as Python's json.dumps does; compact, as cfr writes them,
  /// ~63 KB): 1 MiB leaves 12 times that.
  std::size_t max_line_bytes = std::size_t{1} << 20;
  int max_games = 2000;
  int max_actions = 10000;  // the matches' action cap (cfr-arena --max-steps)
  double max_seconds = 10;
};
/// A transcript upload's bytes (plain or gzip) parsed in memory: {"games": [...], "index": K,
/// "frames": [...]} for game K. ApiError 413 (over a size, game or action limit, or out of time),
/// 422 (not a transcript, an illegal action, an empty file), 404 (no game K).
nlohmann::json parse_replay_upload(std::string_view body, int game, const ReplayLimits& limits);

/// One move as the pages write it: {"who": "you"|"opponent", "kind": "play"|"discard"|"draw_deck"|
/// "take", "card": CARD or null (a deck draw), "color": C or null}, for `action` in `before`.
nlohmann::json move_entry(const lc::State& before, int action, int seat);

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
