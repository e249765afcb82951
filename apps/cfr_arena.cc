// cfr-arena: bot-vs-bot matches under the evaluation protocol, and transcript replay.
//
//   cfr-arena --bot0 heuristic_balanced --bot1 random --games 1000 --seed 0 [--max-steps M] [--json [--per-game]]
//             [--independent-deals] [--parallel N] [--move-timeout S] [--player-logs DIR] [--stop-on-fault]
//             (bots: a bot's name, checkpoint:PATH, external:COMMAND, ...)
//   cfr-arena --replay FILE [--check-bots] [--quiet]
#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "engine/core/errors.h"
#include "engine/core/resources.h"
#include "engine/games/bots.h"
#include "engine/games/match.h"
#include "engine/games/players.h"
#include "engine/games/replay.h"
#ifdef CFR_ARENA_CHECKPOINTS
#include "apps/players/checkpoint_policy.h"
#endif

namespace {

using namespace cfr::lc;

int run_replay(const std::string& path, bool check_bots, bool quiet) {
  const auto games = read_replay_file(path);
  if (games.empty())  // nothing replayed is not "all consistent": the wrong file, or a truncated one
    throw cfr::InputError(fmt::format("{}: no games in the transcript (an empty file?)", path));
  long steps = 0;
  std::string line;
  for (const auto& g : games) {
    replay_game(g, ReplayOptions{.check_bots = check_bots}, path, [&](const ReplayStep& st, const State&) {
      ++steps;
      if (quiet) return;
      nlohmann::json legal = nlohmann::json::array();
      for (cfr::ActionMask m = st.legal; m != 0; m &= m - 1) legal.push_back(std::countr_zero(m));
      nlohmann::json j = {{"game", g.game},
                          {"step", st.step},
                          {"player", st.player},
                          {"phase", st.phase == Phase::kCard ? "card" : "draw"},
                          {"legal", legal},
                          {"action", st.action},
                          {"totals", {st.totals[0], st.totals[1]}},
                          {"terminal", st.terminal}};
      line = j.dump();
      line.push_back('\n');
      std::fwrite(line.data(), 1, line.size(), stdout);
    });
  }
  std::fprintf(stderr, "cfr-arena: replayed %zu games, %ld steps%s: all consistent\n", games.size(), steps,
               check_bots ? ", deterministic bot moves checked" : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-arena: Lost Cities matches between bots and checkpoints (duplicate deals) and replays"};
  std::string bot0, bot1, replay, rules_json;
  int games = 1000, max_steps = 10000, parallel = 256;
  std::uint64_t seed = 0;
  cfr::MatchPlayerFlags flags;
  bool json = false, per_game = false, check_bots = false, quiet = false, independent = false;
  const std::string valid_bots = cfr::join_names(bot_names());
  // An empty value is refused (CLI11 would take it as "not given"); seeds are checked as a range
  // because CLI11 2.1 wraps "-1" and saturates values beyond 64 bits.
  app.add_option("--bot0", bot0, "first bot (seat 0 in even games): " + valid_bots + ", checkpoint:PATH or external:COMMAND")
      ->check(cfr::kNonEmpty);
  app.add_option("--bot1", bot1, "second bot")->check(cfr::kNonEmpty);
  app.add_option("--games", games, "number of games")->check(cfr::kDecimal)->check(cfr::kCountRange);
  app.add_option("--seed", seed, "match seed: deal d (games 2d and 2d + 1, seats swapped) is dealt with seed + d")
      ->check(cfr::kDecimal)
      ->check(cfr::kSeedRange);
  app.add_flag("--independent-deals", independent,
               "the reference's protocol (lost-cities.md §4): game k dealt with seed + k, seats alternating");
  app.add_option("--max-steps", max_steps, "action cap per game, then scored as is")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--parallel", parallel, "games in flight at once (batch players decide them together)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  cfr::add_external_player_options(app, flags);
  app.add_option("--rules", rules_json, R"(rule overrides as a JSON object, e.g. '{"n_colors":3}')")->check(cfr::kNonEmpty);
  auto* js = app.add_flag("--json", json, "print the report as one JSON object");
  app.add_flag("--per-game", per_game,
               "with --json: add the match's seed, max_steps and score_diffs (bot 0's score difference per game index, "
               "null for a game not played), for paired comparisons of two matches on the same deals "
               "(scripts/paired_diff.py)")
      ->needs(js);
  auto* rp = app.add_option("--replay", replay, "replay a transcript file (JSON lines, optionally gzip)")->check(cfr::kNonEmpty);
  app.add_flag("--check-bots", check_bots, "with --replay: deterministic bots must reproduce every move")->needs(rp);
  app.add_flag("--quiet", quiet, "with --replay: print no step lines, only the summary")->needs(rp);
  if (const auto rc = cfr::parse_command_line(app, "cfr-arena", argc, argv)) return *rc;

  return cfr::run_app("cfr-arena", [&] {
    if (!replay.empty()) {
      if (!bot0.empty() || !bot1.empty()) throw cfr::InputError("--replay takes the bots from the file; drop --bot0/--bot1");
      return run_replay(replay, check_bots, quiet);
    }
    if (bot0.empty() || bot1.empty())
      throw cfr::InputError("--bot0 and --bot1 are required (or --replay FILE); valid bots: " + valid_bots);
    const Rules rules = rules_json.empty() ? Rules{} : rules_from_json_text(rules_json, "--rules");
#ifdef CFR_ARENA_CHECKPOINTS
    const auto b0 = cfr::make_any_player(bot0, rules, flags.external);  // a checkpoint decides in batched forwards
    const auto b1 = cfr::make_any_player(bot1, rules, flags.external);
#else
    const auto b0 = make_player(bot0, rules, flags.external);
    const auto b1 = make_player(bot1, rules, flags.external);
#endif
    const MatchReport r = run_match_players(b0.player(), b1.player(),
                                            MatchOptions{.games = games,
                                                         .seed = seed,
                                                         .max_steps = max_steps,
                                                         .rules = rules,
                                                         .duplicate = !independent,
                                                         .stop_on_fault = flags.stop_on_fault},
                                            parallel);
    if (json && per_game) {
      nlohmann::json j = nlohmann::json::parse(report_json(r));
      j["seed"] = seed;
      j["max_steps"] = max_steps;
      nlohmann::json diffs = nlohmann::json::array();
      for (std::size_t k = 0; k < r.diffs.size(); ++k)
        diffs.push_back(r.played[k] ? nlohmann::json(r.diffs[k]) : nlohmann::json(nullptr));
      j["score_diffs"] = std::move(diffs);
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else if (json)
      std::cout << report_json(r) << "\n";
    else
      std::cout << format_report(r);
    if (!r.stop_cause.empty()) {
      std::cerr << fmt::format("cfr-arena: stopped at the first fault (--stop-on-fault): {}\n", r.stop_cause);
      return cfr::kExitPlayerFault;
    }
    return 0;
  });
}
