#pragma once
// Lost Cities game transcripts: one JSON object per line, the format of tests/golden/README.md:
//   {"game": 0, "rules": {knob: value, ...}, "deck": [card ids before dealing, top last],
//    "actions": [unified action ids], "bot0": NAME, "bot1": NAME,          (optional)
//    "legal_counts": [...], "terminal": bool, "totals": [t0, t1]}         (optional, checked)
// Seat 0 is played by bot0. Reading and replaying report every problem as InputError naming the
// line, the field or the step.
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/games/lost_cities.h"

namespace cfr::lc {

struct ReplayGame {
  int line = 0;  // 1-based line of the file
  int game = 0;  // "game" field, or the 0-based index of the game in the file
  Rules rules{};
  std::vector<int> deck;
  std::vector<int> actions;
  std::array<std::optional<std::string>, 2> bots;
  std::optional<std::vector<int>> legal_counts;
  std::optional<bool> terminal;
  std::optional<std::array<int, 2>> totals;
};

/// Rules from a JSON object of knob overrides; unknown knobs, non-integers and invalid rules are
/// InputErrors that start with `where`.
Rules rules_from_json_text(std::string_view json_object_text, std::string_view where);

/// Parses one line. Throws InputError("<file>:<line>: ...") naming the field at fault.
ReplayGame parse_replay_line(std::string_view text, int line, int index, std::string_view file);

/// Every rule knob as a JSON object's text (what rules_from_json_text reads back).
std::string rules_json_text(const Rules& rules);

/// One transcript line (no newline) of a game dealt from `deck` (State::shuffled_deck) and played
/// with `actions`: game, rules, deck, actions, the players' names where given (only names of
/// bots belong there: parse_replay_line checks them), terminal and totals of the final state.
std::string transcript_line(int game, const Rules& rules, std::span<const int> deck, std::span<const int> actions,
                            const std::array<std::optional<std::string>, 2>& bots);

/// The most text read_lines reads from one file (after decompression): 256 MiB, some 75,000 games
/// of a transcript; a gzip file that expands past it (a "zip bomb") is refused before it fills memory.
inline constexpr std::size_t kMaxTextBytes = std::size_t{256} << 20;

/// Reads every non-blank line of a file (plain or gzip-compressed); InputError naming the file and
/// the limit when its text is longer than kMaxTextBytes.
std::vector<std::string> read_lines(const std::string& path);

/// Reads and parses a whole transcript file.
std::vector<ReplayGame> read_replay_file(const std::string& path);

struct ReplayStep {
  int step = 0;    // actions applied before this one
  int player = 0;  // mover
  Phase phase = Phase::kCard;
  ActionMask legal = 0;
  int action = 0;
  std::array<int, 2> totals{};  // after the action
  bool terminal = false;        // after the action
};

struct ReplayOptions {
  /// Every step whose mover is a deterministic bot must be that bot's own choice.
  bool check_bots = false;
};

/// Replays one game: applies every action (an illegal one is an InputError naming the step and
/// the state), checks the recorded legal counts, terminal flag and totals when present, and with
/// check_bots the deterministic bots' moves (the first mismatch names game, step, state and both
/// actions). on_step, if set, is called after each action with the step and the new state.
void replay_game(const ReplayGame& g, const ReplayOptions& opts, std::string_view file,
                 const std::function<void(const ReplayStep&, const State&)>& on_step = {});

}  // namespace cfr::lc
