#pragma once
// Bot-vs-bot matches with the evaluation protocol of lost-cities.md §4: game k is dealt with
// seed + k; bot 0 sits in seat 0 for even k and seat 1 for odd k; a game still running after
// max_steps actions is stopped and scored as it stands (a timeout). Bot i's RNG for game k is
// Rng(derive_seed(seed, k, i)), so every match is reproducible from its seed.
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <string>

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
};

/// Everything from bot 0's point of view (wins = games bot 0 won).
struct MatchReport {
  std::string bot0, bot1;
  int games = 0, wins = 0, losses = 0, draws = 0, timeouts = 0;
  bool stopped = false;  // MatchOptions::stop ended the match early
  double score0_sum = 0, score1_sum = 0, diff_sum = 0, diff_sq_sum = 0, length_sum = 0,
         length_sq_sum = 0;
  double seconds = 0;

  double win_rate() const { return games ? static_cast<double>(wins) / games : 0.0; }
  double avg_score0() const { return games ? score0_sum / games : 0.0; }
  double avg_score1() const { return games ? score1_sum / games : 0.0; }
  double avg_diff() const { return games ? diff_sum / games : 0.0; }
  double avg_length() const { return games ? length_sum / games : 0.0; }
  double sd_length() const;
  double sd_diff() const;
  double games_per_second() const { return seconds > 0 ? games / seconds : 0.0; }
};

/// Plays one game between two bots from a deal seed; returns the final state. bots[seat].
State play_game(Bot& seat0, Bot& seat1, const Rules& rules, std::uint64_t deal_seed, Rng& rng0,
                Rng& rng1, int max_steps);

MatchReport run_match(Bot& bot0, Bot& bot1, const MatchOptions& opts);

/// A deterministic bot that decides many games at once (e.g. one network forward for all).
class BatchBot {
 public:
  virtual ~BatchBot() = default;
  virtual std::string_view name() const noexcept = 0;
  /// actions[i] = a legal action for states[i]'s current player. Preconditions: no state is
  /// terminal; states.size() == actions.size() ≥ 1.
  virtual void choose_actions(std::span<const State* const> states, std::span<int> actions) = 0;
};

/// The same protocol, games and report as run_match (bot 1 draws from the same RNG streams), but
/// up to `parallel` games run in lockstep and bot 0 decides all of its pending moves in one call.
MatchReport run_match_batched(BatchBot& bot0, Bot& bot1, const MatchOptions& opts, int parallel = 256);

std::string format_report(const MatchReport& r);  // human-readable, several lines
std::string report_json(const MatchReport& r);     // one JSON object

}  // namespace cfr::lc
