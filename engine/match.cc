#include "engine/match.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/errors.h"

namespace cfr::lc {

double MatchReport::sd_length() const {
  if (games < 2) return 0.0;
  const double m = avg_length();
  return std::sqrt(std::max(0.0, (length_sq_sum - games * m * m) / (games - 1)));
}

double MatchReport::sd_diff() const {
  if (games < 2) return 0.0;
  const double m = avg_diff();
  return std::sqrt(std::max(0.0, (diff_sq_sum - games * m * m) / (games - 1)));
}

State play_game(Bot& seat0, Bot& seat1, const Rules& rules, std::uint64_t deal_seed, Rng& rng0,
                Rng& rng1, int max_steps) {
  State s = State::deal(rules, deal_seed);
  for (int step = 0; step < max_steps && !s.is_terminal(); ++step) {
    const int a = s.current_player() == 0 ? seat0.choose_action(s, rng0) : seat1.choose_action(s, rng1);
    s.apply_action(a);
  }
  return s;
}

MatchReport run_match(Bot& bot0, Bot& bot1, const MatchOptions& opts) {
  if (opts.games < 0) throw InputError(fmt::format("games = {} must be ≥ 0", opts.games));
  if (opts.max_steps <= 0) throw InputError(fmt::format("max_steps = {} must be > 0", opts.max_steps));
  opts.rules.validate();
  MatchReport r;
  r.bot0 = bot0.name();
  r.bot1 = bot1.name();
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < opts.games; ++k) {
    Rng rng0(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 0));
    Rng rng1(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 1));
    const bool swapped = (k % 2) == 1;
    const std::uint64_t deal_seed = opts.seed + static_cast<std::uint64_t>(k);
    const State s = swapped ? play_game(bot1, bot0, opts.rules, deal_seed, rng1, rng0, opts.max_steps)
                            : play_game(bot0, bot1, opts.rules, deal_seed, rng0, rng1, opts.max_steps);
    const int seat0 = swapped ? 1 : 0;
    const int a = s.total(seat0), b = s.total(1 - seat0);
    ++r.games;
    if (a > b)
      ++r.wins;
    else if (a < b)
      ++r.losses;
    else
      ++r.draws;
    if (!s.is_terminal()) ++r.timeouts;
    r.score0_sum += a;
    r.score1_sum += b;
    r.diff_sum += a - b;
    r.diff_sq_sum += static_cast<double>(a - b) * (a - b);
    r.length_sum += s.move_count();
    r.length_sq_sum += static_cast<double>(s.move_count()) * s.move_count();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string format_report(const MatchReport& r) {
  return fmt::format(
      "{} vs {}: {} games\n"
      "  wins/losses/draws  {}/{}/{}   win rate {:.3f}\n"
      "  average scores     {:.2f} vs {:.2f}   average score difference {:+.2f} (sd {:.1f})\n"
      "  average length     {:.1f} actions (sd {:.1f})   timeouts {}\n"
      "  speed              {:.0f} games/s ({:.2f} s)\n",
      r.bot0, r.bot1, r.games, r.wins, r.losses, r.draws, r.win_rate(), r.avg_score0(),
      r.avg_score1(), r.avg_diff(), r.sd_diff(), r.avg_length(), r.sd_length(), r.timeouts,
      r.games_per_second(), r.seconds);
}

std::string report_json(const MatchReport& r) {
  nlohmann::json j = {{"bot0", r.bot0},
                      {"bot1", r.bot1},
                      {"games", r.games},
                      {"wins", r.wins},
                      {"losses", r.losses},
                      {"draws", r.draws},
                      {"win_rate", r.win_rate()},
                      {"avg_score0", r.avg_score0()},
                      {"avg_score1", r.avg_score1()},
                      {"avg_score_diff", r.avg_diff()},
                      {"sd_score_diff", r.sd_diff()},
                      {"avg_length", r.avg_length()},
                      {"sd_length", r.sd_length()},
                      {"timeouts", r.timeouts},
                      {"games_per_second", r.games_per_second()},
                      {"seconds", r.seconds}};
  return j.dump();
}

}  // namespace cfr::lc
