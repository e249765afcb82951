#include "engine/games/match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"

namespace cfr::lc {

int MatchReport::forfeits(int player) const {
  return static_cast<int>(std::count_if(faults.begin(), faults.end(), [&](const Fault& f) { return f.player == player; }));
}

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

double MatchReport::se_diff() const {
  if (games < 2) return 0.0;
  if (!duplicate) return sd_diff() / std::sqrt(static_cast<double>(games));
  // One observation per deal: the mean of its played games.
  double sum = 0, sq = 0;
  int deals = 0;
  for (std::size_t d = 0; 2 * d < diffs.size(); ++d) {
    double s = 0;
    int n = 0;
    for (std::size_t k = 2 * d; k < std::min(diffs.size(), 2 * d + 2); ++k)
      if (played[k]) {
        s += diffs[k];
        ++n;
      }
    if (n == 0) continue;
    sum += s / n;
    sq += (s / n) * (s / n);
    ++deals;
  }
  if (deals < 2) return 0.0;
  const double m = sum / deals;
  return std::sqrt(std::max(0.0, (sq - deals * m * m) / (deals - 1)) / deals);
}

Interval wilson_interval(int successes, int n, double z) {
  if (n <= 0) return {0.0, 1.0};
  const double p = static_cast<double>(successes) / n, z2 = z * z, denom = 1 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / denom;
  return {successes == 0 ? 0.0 : std::max(0.0, centre - half), successes == n ? 1.0 : std::min(1.0, centre + half)};
}

State play_game(Bot& seat0, Bot& seat1, const Rules& rules, std::uint64_t deal_seed, Rng& rng0, Rng& rng1, int max_steps) {
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

/// Game k's deal: seed + k / 2 for duplicate deals (both seatings of one deal), else seed + k.
std::uint64_t deal_seed(const MatchOptions& opts, int k) {
  return opts.seed + static_cast<std::uint64_t>(opts.duplicate ? k / 2 : k);
}

MatchReport new_report(std::string_view bot0, std::string_view bot1, const MatchOptions& opts) {
  MatchReport r;
  r.bot0 = bot0;
  r.bot1 = bot1;
  r.duplicate = opts.duplicate;
  r.diffs.assign(static_cast<std::size_t>(opts.games), 0);
  r.played.assign(static_cast<std::size_t>(opts.games), false);
  return r;
}

int expeditions_opened(const State& s, int player) {
  int n = 0;
  for (int c = 0; c < s.rules().n_colors; ++c) n += s.expedition_card_count(player, c) > 0 ? 1 : 0;
  return n;
}

/// Adds game k's final state (bot 0 in seat k % 2) to the report; forfeited_by is the player (0:
/// bot 0, 1: bot 1) who forfeited it, or −1.
void record_game(MatchReport& r, const State& s, int k, int forfeited_by) {
  const int seat0 = k % 2;
  const int a = s.total(seat0), b = s.total(1 - seat0);
  ++r.games;
  if (forfeited_by >= 0)
    ++(forfeited_by == 0 ? r.losses : r.wins);
  else if (a > b)
    ++r.wins;
  else if (a < b)
    ++r.losses;
  else
    ++r.draws;
  if (!s.is_terminal() && forfeited_by < 0) ++r.timeouts;
  r.score0_sum += a;
  r.score1_sum += b;
  r.diff_sum += a - b;
  r.diff_sq_sum += static_cast<double>(a - b) * (a - b);
  r.length_sum += s.move_count();
  r.length_sq_sum += static_cast<double>(s.move_count()) * s.move_count();
  r.opened0_sum += expeditions_opened(s, seat0);
  r.opened1_sum += expeditions_opened(s, 1 - seat0);
  r.diffs[static_cast<std::size_t>(k)] = a - b;
  r.played[static_cast<std::size_t>(k)] = true;
}

}  // namespace

MatchReport run_match_players(MatchPlayer p0, MatchPlayer p1, const MatchOptions& opts, int parallel) {
  check_match_options(opts);
  if (parallel < 1) throw InputError(fmt::format("parallel = {} must be ≥ 1", parallel));
  for (const MatchPlayer* p : {&p0, &p1})
    if ((p->bot == nullptr) == (p->batch == nullptr)) throw std::logic_error("a match player is a bot or a batch bot");
  MatchReport r = new_report(p0.name(), p1.name(), opts);
  const auto t0 = std::chrono::steady_clock::now();
  struct Live {
    State s;
    Rng rng[2];             // player i's stream for this game
    int k, steps;           // player 0 sits in seat k % 2
    int forfeited_by = -1;  // the player who answered BatchBot::kForfeit
  };
  const MatchPlayer players[2] = {p0, p1};
  auto seat_of = [](int player, int k) { return player == 0 ? k % 2 : 1 - k % 2; };  // player 0 sits in seat k % 2
  // Batch players follow their games: start, every move, end (BatchBot's event hooks).
  auto apply = [&](Live& g, int action) {
    for (const MatchPlayer& p : players)
      if (p.batch != nullptr) p.batch->move_made(g.k, g.s, action);
    ++(g.s.current_player() == g.k % 2 ? r.decisions0 : r.decisions1);
    g.s.apply_action(action);
    ++g.steps;
  };
  // Up to `parallel` games are live; a finished game's slot takes the next game, so batches stay
  // full until the last games.
  std::vector<Live> live;
  int next = 0;
  auto start = [&](int k) {
    Live g{State::deal(opts.rules, deal_seed(opts, k)),
           {Rng(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 0)),
            Rng(derive_seed(opts.seed, static_cast<std::uint64_t>(k), 1))},
           k,
           0};
    for (int p = 0; p < 2; ++p)
      if (players[p].batch != nullptr)
        players[p].batch->game_started(k, seat_of(p, k), derive_seed(opts.seed, static_cast<std::uint64_t>(k), p));
    return g;
  };
  for (; next < std::min(opts.games, parallel); ++next) live.push_back(start(next));
  std::vector<const State*> pending[2];
  std::vector<Rng*> pending_rng;
  std::vector<int> pending_game;
  std::vector<std::size_t> pending_slot[2];
  std::vector<int> actions;
  bool fault_stop = false;
  while (!live.empty()) {
    if (fault_stop || (opts.stop != nullptr && opts.stop->load(std::memory_order_relaxed))) {
      r.stopped = true;
      break;
    }
    for (int p = 0; p < 2; ++p) {
      pending[p].clear();
      pending_slot[p].clear();
    }
    for (std::size_t i = 0; i < live.size();) {
      Live& g = live[i];
      // Plain bots move until a batch player is to move or the game is over (as play_game would).
      int mover = -1;
      while (g.forfeited_by < 0 && g.steps < opts.max_steps && !g.s.is_terminal()) {
        const int p = g.s.current_player() == g.k % 2 ? 0 : 1;  // which player is to move
        if (players[p].batch != nullptr) {
          mover = p;
          break;
        }
        apply(g, players[p].bot->choose_action(g.s, g.rng[p]));
      }
      if (mover >= 0) {
        pending_slot[mover].push_back(i++);
        continue;
      }
      record_game(r, g.s, g.k, g.forfeited_by);
      for (const MatchPlayer& p : players)
        if (p.batch != nullptr) p.batch->game_ended(g.k, g.s, g.forfeited_by < 0 ? -1 : seat_of(g.forfeited_by, g.k));
      if (g.forfeited_by >= 0 && opts.stop_on_fault) {
        r.stop_cause = fmt::format("{} forfeits game {}: {}", players[g.forfeited_by].name(), g.k, r.faults.back().cause);
        fault_stop = true;
      }
      if (next < opts.games && !fault_stop) {
        g = start(next++);  // the slot is examined again with its new game
      } else {
        g = std::move(live.back());
        live.pop_back();
      }
    }
    for (int p = 0; p < 2; ++p) {
      if (pending_slot[p].empty()) continue;
      pending_rng.clear();
      pending_game.clear();
      for (const std::size_t i : pending_slot[p]) {
        pending[p].push_back(&live[i].s);
        pending_rng.push_back(&live[i].rng[p]);
        pending_game.push_back(live[i].k);
      }
      actions.resize(pending[p].size());
      players[p].batch->choose_actions(pending[p], pending_rng, pending_game, actions);
      for (std::size_t j = 0; j < pending_slot[p].size(); ++j) {
        Live& g = live[pending_slot[p][j]];
        if (actions[j] == BatchBot::kForfeit) {
          g.forfeited_by = p;
          r.faults.push_back({.game = g.k, .player = p, .cause = players[p].batch->forfeit_cause(g.k)});
          continue;
        }
        apply(g, actions[j]);
      }
    }
  }
  for (const MatchPlayer& p : players)
    if (p.batch != nullptr) p.batch->match_ended();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

MatchReport run_match(Bot& bot0, Bot& bot1, const MatchOptions& opts) {
  return run_match_players({.bot = &bot0}, {.bot = &bot1}, opts, /*parallel=*/1);  // one game at a time
}

MatchReport run_match_batched(BatchBot& bot0, Bot& bot1, const MatchOptions& opts, int parallel) {
  return run_match_players({.batch = &bot0}, {.bot = &bot1}, opts, parallel);
}

namespace {

/// The forfeits and the first causes, for format_report (empty when nobody forfeited).
std::string faults_text(const MatchReport& r) {
  std::string s;
  if (!r.faults.empty()) s = fmt::format("  forfeits           {} vs {}\n", r.forfeits(0), r.forfeits(1));
  constexpr std::size_t kShown = 5;
  for (std::size_t i = 0; i < std::min(kShown, r.faults.size()); ++i)
    s += fmt::format("    game {}: {} forfeits: {}\n", r.faults[i].game, r.faults[i].player == 0 ? r.bot0 : r.bot1,
                     r.faults[i].cause);
  if (r.faults.size() > kShown) s += fmt::format("    … {} more (--json lists all)\n", r.faults.size() - kShown);
  if (r.stopped)
    s += fmt::format("  stopped            {}\n", r.stop_cause.empty() ? "by a signal" : "by a fault: " + r.stop_cause);
  return s;
}

}  // namespace

std::string format_report(const MatchReport& r) {
  const Interval w = r.win_interval();
  return fmt::format(
      "{} vs {}: {} games{}\n"
      "  wins/draws/losses  {}/{}/{}   win rate {:.3f} (95% interval {:.3f}–{:.3f})\n"
      "  average scores     {:.2f} vs {:.2f}   score difference {:+.2f} ± {:.2f} (standard error; sd {:.1f})\n"
      "  expeditions opened {:.2f} vs {:.2f} per game\n"
      "  average length     {:.1f} actions (sd {:.1f})   hit the action cap {}\n"
      "  speed              {:.0f} games/s ({:.2f} s)\n{}",
      r.bot0, r.bot1, r.games, r.duplicate ? fmt::format(" ({} duplicate deals, seats swapped)", (r.games + 1) / 2) : "", r.wins,
      r.draws, r.losses, r.win_rate(), w.lo, w.hi, r.avg_score0(), r.avg_score1(), r.avg_diff(), r.se_diff(), r.sd_diff(),
      r.avg_opened0(), r.avg_opened1(), r.avg_length(), r.sd_length(), r.timeouts, r.games_per_second(), r.seconds,
      faults_text(r));
}

std::string report_json(const MatchReport& r) {
  const Interval w = r.win_interval();
  nlohmann::json j = {{"bot0", r.bot0},
                      {"bot1", r.bot1},
                      {"games", r.games},
                      {"duplicate_deals", r.duplicate},
                      {"wins", r.wins},
                      {"losses", r.losses},
                      {"draws", r.draws},
                      {"win_rate", r.win_rate()},
                      {"win_rate_lo95", w.lo},
                      {"win_rate_hi95", w.hi},
                      {"avg_score0", r.avg_score0()},
                      {"avg_score1", r.avg_score1()},
                      {"avg_score_diff", r.avg_diff()},
                      {"se_score_diff", r.se_diff()},
                      {"sd_score_diff", r.sd_diff()},
                      {"opened_per_game0", r.avg_opened0()},
                      {"opened_per_game1", r.avg_opened1()},
                      {"avg_length", r.avg_length()},
                      {"sd_length", r.sd_length()},
                      {"timeouts", r.timeouts},
                      {"decisions0", r.decisions0},
                      {"decisions1", r.decisions1},
                      {"forfeits0", r.forfeits(0)},
                      {"forfeits1", r.forfeits(1)},
                      {"stopped", r.stopped},
                      {"games_per_second", r.games_per_second()},
                      {"seconds", r.seconds}};
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& f : r.faults) faults.push_back({{"game", f.game}, {"player", f.player}, {"cause", f.cause}});
  j["faults"] = std::move(faults);
  if (!r.stop_cause.empty()) j["stop_cause"] = r.stop_cause;
  // A cause may quote an external player's bytes: invalid UTF-8 becomes U+FFFD, never an error.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cfr::lc
