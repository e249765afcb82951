#pragma once
// Bot-vs-bot matches. Duplicate deals (the default): games 2d and 2d + 1 are both dealt with
// seed + d, bot 0 in seat 0 for the first and in seat 1 for the second, so that each side plays
// both hands of every deal and the luck of the deal cancels. With duplicate = false, the
// reference's protocol (lost-cities.md §4): game k is dealt with seed + k, bot 0 in seat k % 2.
// A game still running after max_steps actions is stopped and scored as it stands (a timeout).
// Bot i's RNG for game k is Rng(derive_seed(seed, k, i)), so every match is reproducible from its
// seed.
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"

namespace cfr::lc {

struct MatchOptions {
  int games = 1000;
  std::uint64_t seed = 0;
  int max_steps = 10000;
  Rules rules{};
  /// When set (SIGINT/SIGTERM), the match ends after the current move (MatchReport::stopped; the
  /// games not finished are not counted).
  const std::atomic<bool>* stop = nullptr;
  /// Each deal played twice, seats swapped (see above); false: the reference's protocol.
  bool duplicate = true;
  /// A forfeit (BatchBot::kForfeit: an external player's fault) stops the match after recording
  /// that game (MatchReport::stopped and stop_cause); false: the match goes on.
  bool stop_on_fault = false;
};

/// A binomial proportion's 95% interval (Wilson score interval; z = 1.96).
struct Interval {
  double lo = 0, hi = 0;
};
Interval wilson_interval(int successes, int n, double z = 1.959963984540054);

/// Everything from bot 0's point of view (wins = games bot 0 won).
struct MatchReport {
  std::string bot0, bot1;
  int games = 0, wins = 0, losses = 0, draws = 0, timeouts = 0;
  bool stopped = false;    // MatchOptions::stop, or a fault under stop_on_fault, ended the match early
  std::string stop_cause;  // the fault that stopped it (empty for a signal)
  double score0_sum = 0, score1_sum = 0, diff_sum = 0, diff_sq_sum = 0, length_sum = 0, length_sq_sum = 0;
  double opened0_sum = 0, opened1_sum = 0;  // expeditions opened by bot 0 / bot 1, summed over games
  bool duplicate = true;                    // MatchOptions::duplicate
  std::vector<int> diffs;                   // bot 0's score difference per game index (0 for an unplayed one)
  std::vector<bool> played;                 // per game index
  long decisions0 = 0, decisions1 = 0;      // moves chosen by bot 0 / bot 1
  /// A game a player forfeited (BatchBot::kForfeit): a loss for that player whatever the scores
  /// (which are recorded as they stood).
  struct Fault {
    int game = 0;
    int player = 0;  // 0: bot 0, 1: bot 1
    std::string cause;
  };
  std::vector<Fault> faults;
  int forfeits(int player) const;
  double seconds = 0;

  double win_rate() const { return games ? static_cast<double>(wins) / games : 0.0; }
  double avg_score0() const { return games ? score0_sum / games : 0.0; }
  double avg_score1() const { return games ? score1_sum / games : 0.0; }
  double avg_diff() const { return games ? diff_sum / games : 0.0; }
  double avg_length() const { return games ? length_sum / games : 0.0; }
  double sd_length() const;
  double sd_diff() const;
  /// Standard error of avg_diff(). Duplicate deals: from the spread of the per-deal means (a deal's
  /// two games are one paired observation); otherwise sd_diff / sqrt(games).
  double se_diff() const;
  Interval win_interval() const { return wilson_interval(wins, games); }
  double avg_opened0() const { return games ? opened0_sum / games : 0.0; }
  double avg_opened1() const { return games ? opened1_sum / games : 0.0; }
  double games_per_second() const { return seconds > 0 ? games / seconds : 0.0; }
};

/// Plays one game between two bots from a deal seed; returns the final state. bots[seat].
State play_game(Bot& seat0, Bot& seat1, const Rules& rules, std::uint64_t deal_seed, Rng& rng0, Rng& rng1, int max_steps);

MatchReport run_match(Bot& bot0, Bot& bot1, const MatchOptions& opts);

/// A bot that decides many games at once (e.g. one network forward for all), or one that follows
/// its games move by move (an external program: engine/games/external_player.h).
class BatchBot {
 public:
  /// An action that forfeits the game: the player could not move (an external player's fault);
  /// forfeit_cause(game) says why.
  static constexpr int kForfeit = -1;

  virtual ~BatchBot() = default;
  virtual std::string_view name() const noexcept = 0;
  /// Match events, in the order they happen (defaults ignore them). Game k starts with this player
  /// in `seat`; `seed` is the player's RNG seed for the game (never the deal's).
  virtual void game_started(int /*game*/, int /*seat*/, std::uint64_t /*seed*/) {}
  /// Any move of game k (either seat) is about to be applied to `before`.
  virtual void move_made(int /*game*/, const State& /*before*/, int /*action*/) {}
  /// Game k is over: `final` is terminal, at the action cap, or where a forfeit stopped it;
  /// forfeited_by is the forfeiting seat or −1.
  virtual void game_ended(int /*game*/, const State& /*final*/, int /*forfeited_by*/) {}
  /// The match is over (finished or stopped); games started and not ended were abandoned.
  virtual void match_ended() {}
  /// Why this player answered kForfeit for game k.
  virtual std::string forfeit_cause(int /*game*/) const { return "forfeit"; }
  /// actions[i] = a legal action for states[i]'s current player; rngs[i] is that game's stream
  /// for this player (a bot that samples draws from it, so a match stays reproducible) and
  /// games[i] the game's index in the match (a bot that fixes something per game keys it on that).
  /// An action may be kForfeit (see above). Preconditions: no state is terminal; states, rngs,
  /// games and actions have the same size ≥ 1.
  virtual void choose_actions(std::span<const State* const> states, std::span<Rng* const> rngs, std::span<const int> games,
                              std::span<int> actions) = 0;
};

/// A side of a match: a bot deciding one move at a time, or a batch bot deciding many games' moves
/// in one call (a network: one forward per round). Exactly one is set.
struct MatchPlayer {
  Bot* bot = nullptr;
  BatchBot* batch = nullptr;
  std::string_view name() const noexcept { return bot != nullptr ? bot->name() : batch->name(); }
};

/// The same protocol, games and report as run_match (plain bots draw from the same RNG streams),
/// but up to `parallel` games run in lockstep and each batch player decides all of its pending
/// moves in one call per round.
MatchReport run_match_players(MatchPlayer p0, MatchPlayer p1, const MatchOptions& opts, int parallel = 256);
/// run_match_players with a batch bot 0 and a plain bot 1.
MatchReport run_match_batched(BatchBot& bot0, Bot& bot1, const MatchOptions& opts, int parallel = 256);

std::string format_report(const MatchReport& r);  // human-readable, several lines
std::string report_json(const MatchReport& r);    // one JSON object

}  // namespace cfr::lc
