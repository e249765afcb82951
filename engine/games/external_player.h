#pragma once
// External Lost Cities players: any program that speaks the line protocol of
// docs/external-players.md (one JSON object per line over its stdin and stdout) plays wherever a
// bot does, as `external:COMMAND`.
//
// The command is split into an argument list (whitespace; '…' and "…" quote) and run directly, no
// shell; its stderr is appended to LOG_DIR/external-<command>.log (ExternalOptions::log_dir; by
// default a folder of this process under the system's temporary directory). The player follows every game
// it sits in (start, the opponent's moves, end) and is asked for all of its pending decisions of a
// round in one write, so a player may batch its own work across games. Faults (no answer within the
// move timeout, a malformed or illegal answer, an exit or a crash, a player that stops reading)
// forfeit the games they touch (BatchBot::kForfeit, with the cause); a player that dies or hangs is
// stopped and started again for the games that follow. Nothing waits longer than the timeout,
// and the event hooks (game_started, move_made, game_ended) do not wait for the player at all:
// events wait for its next decision (past 64 KiB of them, as much as its pipe takes is written at
// once), and a player that leaves over 1 MiB of them unread (plus 1 KiB a game in progress) has
// stopped reading (a fault). Only game_started, when it starts a stopped player again, waits for
// its hello (up to the start timeout).
// The player runs in a process group of its own, and stopping it kills the group: programs it
// started end with it. What it may write to files (its stderr log included) is capped.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/games/lost_cities.h"
#include "engine/games/match.h"

namespace cfr::lc {

inline constexpr std::string_view kExternalPrefix = "external:";
inline constexpr int kExternalProtocolVersion = 1;

struct ExternalOptions {
  /// All answers to one round of decisions are due within this many seconds.
  double move_timeout_s = 10.0;
  /// The answer to the hello (a player's start-up, e.g. loading a network) is due within this.
  double start_timeout_s = 30.0;
  /// The player's stderr is appended to LOG_DIR/external-<command, sanitised>.log. Empty: this
  /// process's folder in the system's temporary directory (default_player_log_dir(), created when
  /// the first player starts, and named on stderr then), never the current directory.
  std::string log_dir;
  /// Longest answer line accepted (longer: the player is stopped, its games forfeited).
  std::size_t max_line_bytes = 1 << 20;
  /// The largest file the player may write (RLIMIT_FSIZE), its stderr log included: past it the
  /// player is killed (SIGXFSZ) and its games forfeited; a log past half of it is moved to LOG.1
  /// when the player starts (again), so a player's logs hold at most twice this on disk.
  std::uint64_t max_log_bytes = 64ULL << 20;
};

/// Longest move or start timeout accepted (a day): a larger one would overflow the clock.
inline constexpr double kMaxExternalTimeoutS = 86400.0;

/// Splits a command into its argument list: whitespace separates, '…' and "…" quote (no escapes,
/// no expansion of anything). InputError for an empty command or an unbalanced quote.
std::vector<std::string> split_command(std::string_view command);

/// The log file's name for a command: external-<command with every character outside
/// [A-Za-z0-9._-] as '_', at most 80 characters>.log
std::string external_log_name(std::string_view command);

/// The players' log folder when ExternalOptions::log_dir is empty: TMPDIR/cfr-player-logs-XXXXXX
/// (std::filesystem::temp_directory_path(): $TMPDIR, else /tmp), made by the first call in this
/// process with a name nobody could know beforehand and mode 0700 (mkdtemp), the same folder for
/// every later call. InputError when it cannot be made.
std::string default_player_log_dir();

/// A readable name of a legal action in s: "play c0:5", "discard c2:W", "draw deck", "take c3:4".
std::string action_name(const State& s, int action);

/// The protocol's "decide" message for the player to move in s (one line, no newline): its view
/// of the state, the legal actions with their names and, when with_encoding, the encoding of
/// engine/games/lost_cities.h (both flags on) from its seat.
std::string decision_message(const State& s, std::uint64_t game, bool with_encoding);

/// Starts the player and exchanges the hello. InputError naming the command when it cannot be
/// run or does not answer the hello as the protocol says (the log file has its stderr).
std::unique_ptr<BatchBot> make_external_player(std::string_view command, const Rules& rules, const ExternalOptions& opts = {});

}  // namespace cfr::lc
