#include "engine/games/match.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"

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

namespace {

void check_match_options(const MatchOptions& opts) {
  if (opts.games < 0) throw InputError(fmt::format("games = {} must be ≥ 0", opts.games));
  if (opts.max_steps <= 0) throw InputError(fmt::format("max_steps = {} must be > 0", opts.max_steps));
  opts.rules.validate();
}

/// Adds game k's final state (bot 0 in seat k % 2) to the report.
void record_game(MatchReport& r, const State& s, int k) {
  const int seat0 = k % 2;
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

}  // namespace

MatchReport run_match(Bot& bot0, Bot& bot1, const MatchOptions& opts) {
  check_match_options(opts);
  MatchReport r;
  r.bot0 = bot0.name();
  r.bot1 = bot1.name();
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < opts.games; ++k) {
    if (opts.stop != nullptr && opts.stop->load(std::memory_order_relaxed)) {
      r.stopped = true;
      break;
    }
    Rng rng0(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 0));
    Rng rng1(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 1));
    const bool swapped = (k % 2) == 1;
    const std::uint64_t deal_seed = opts.seed + static_cast<std::uint64_t>(k);
    const State s = swapped ? play_game(bot1, bot0, opts.rules, deal_seed, rng1, rng0, opts.max_steps)
                            : play_game(bot0, bot1, opts.rules, deal_seed, rng0, rng1, opts.max_steps);
    record_game(r, s, k);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

MatchReport run_match_batched(BatchBot& bot0, Bot& bot1, const MatchOptions& opts, int parallel) {
  check_match_options(opts);
  if (parallel < 1) throw InputError(fmt::format("parallel = {} must be ≥ 1", parallel));
  MatchReport r;
  r.bot0 = bot0.name();
  r.bot1 = bot1.name();
  const auto t0 = std::chrono::steady_clock::now();
  struct Live {
    State s;
    Rng rng1;
    int k, steps;  // bot 0 sits in seat k % 2
  };
  // Up to `parallel` games are live; a finished game's slot takes the next game, so batches stay
  // full until the last games.
  std::vector<Live> live;
  int next = 0;
  auto start = [&](int k) {
    return Live{State::deal(opts.rules, opts.seed + static_cast<std::uint64_t>(k)),
                Rng(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 1)), k, 0};
  };
  for (; next < std::min(opts.games, parallel); ++next) live.push_back(start(next));
  std::vector<const State*> pending;
  std::vector<std::size_t> pending_slot;
  std::vector<int> actions;
  while (!live.empty()) {
    if (opts.stop != nullptr && opts.stop->load(std::memory_order_relaxed)) {
      r.stopped = true;
      break;
    }
    pending.clear();
    pending_slot.clear();
    for (std::size_t i = 0; i < live.size();) {
      Live& g = live[i];
      // bot 1 moves until it is bot 0's turn or the game is over (as play_game would).
      while (g.steps < opts.max_steps && !g.s.is_terminal() && g.s.current_player() != g.k % 2) {
        g.s.apply_action(bot1.choose_action(g.s, g.rng1));
        ++g.steps;
      }
      if (g.steps < opts.max_steps && !g.s.is_terminal()) {
        pending_slot.push_back(i++);
        continue;
      }
      record_game(r, g.s, g.k);
      if (next < opts.games) {
        g = start(next++);  // the slot is examined again with its new game
      } else {
        g = std::move(live.back());
        live.pop_back();
      }
    }
    if (pending_slot.empty()) continue;
    for (const std::size_t i : pending_slot) pending.push_back(&live[i].s);
    actions.resize(pending.size());
    bot0.choose_actions(pending, actions);
    for (std::size_t j = 0; j < pending_slot.size(); ++j) {
      Live& g = live[pending_slot[j]];
      g.s.apply_action(actions[j]);
      ++g.steps;
    }
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
