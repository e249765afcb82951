// cfr-ladder: a round robin among bots and checkpoints on duplicate deals, and the ratings it
// gives (Bradley–Terry on the Elo scale, 95% intervals, relative to an anchor).
//   cfr-ladder PLAYER PLAYER... [--games N] [--seed S] [--max-steps M] [--anchor NAME]
//              [--json FILE] [--svg FILE] [--rules JSON]
// A PLAYER is a bot's name, checkpoint:PATH (a checkpoint decides in batched forwards) or
// external:COMMAND (docs/external-players.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "apps/run/stop_signals.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/ratings.h"
#include "engine/core/resources.h"
#include "engine/games/bots.h"
#include "engine/games/match.h"
#include "engine/games/players.h"
#include "engine/games/replay.h"  // rules_from_json_text
#ifdef CFR_ARENA_CHECKPOINTS
#include "apps/players/checkpoint_policy.h"
#endif

namespace {

using namespace cfr::lc;

/// `text` as XML character data or an attribute value: & < > " ' escaped (a player spec such as
/// heuristic_expert?wager_margin=1&wager_min_cards=1 holds '&'), other control characters than
/// tab and newline as spaces.
std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const char* entity = c == '&'    ? "&amp;"
                         : c == '<'  ? "&lt;"
                         : c == '>'  ? "&gt;"
                         : c == '"'  ? "&quot;"
                         : c == '\'' ? "&apos;"
                                     : nullptr;
    if (entity != nullptr)
      out += entity;
    else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
      out += ' ';  // a control character is not XML even escaped
    else
      out += c;
  }
  return out;
}

/// A horizontal bar per player at its rating, with its 95% interval as a whisker. Names and the
/// title are escaped here.
std::string ladder_svg(const std::vector<cfr::Rating>& ratings, const std::string& title) {
  double lo = 0, hi = 0;
  for (const auto& r : ratings) {
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
  }
  const double pad = std::max(50.0, 0.05 * (hi - lo));
  lo -= pad;
  hi += pad;
  constexpr int kLabel = 260, kPlot = 560, kRow = 28, kTop = 40;
  const int height = kTop + kRow * static_cast<int>(ratings.size()) + 40;
  auto x = [&](double v) { return kLabel + (v - lo) / (hi - lo) * kPlot; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"22\" font-size=\"15\">{}</text>\n"
      "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
      kLabel + kPlot + 20, height, xml_escape(title), x(0), kTop - 6, x(0), height - 34);
  for (std::size_t i = 0; i < ratings.size(); ++i) {
    const auto& r = ratings[i];
    const int y = kTop + kRow * static_cast<int>(i);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabel - 8, y + 15, xml_escape(r.name));
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" fill=\"#4a7fb5\"/>\n", std::min(x(0), x(r.elo)),
                     y + 3, std::abs(x(r.elo) - x(0)));
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"black\" stroke-width=\"1.5\"/>\n", x(r.lo),
                     y + 11, x(r.hi), y + 11);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\">{:+.0f}</text>\n", x(r.hi) + 4, y + 15, r.elo);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">Elo relative to the anchor (0); whiskers: 95% intervals</text>\n",
                   kLabel, height - 14);
  return s + "</svg>\n";
}

/// A signal ended the round robin before its last pair.
constexpr int kExitStopped = 130;

}  // namespace

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-ladder: a round robin among Lost Cities bots and checkpoints (duplicate deals) and its ratings"};
  std::vector<std::string> names;
  std::string anchor, json_path, svg_path, rules_json;
  int games = 200, max_steps = 10000;
  std::uint64_t seed = 0;
  cfr::MatchPlayerFlags flags;
  app.add_option("PLAYER", names, "bot names, checkpoint:PATH or external:COMMAND (at least two, each once)")
      ->required()
      ->check(cfr::kNonEmpty);
  app.add_option("--games", games, "games per pair (each deal twice, seats swapped)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--seed", seed, "match seed: deal d of every pair is dealt with seed + d")
      ->check(cfr::kDecimal)
      ->check(cfr::kSeedRange);
  app.add_option("--max-steps", max_steps, "action cap per game, then scored as is")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--anchor", anchor, "the player rated 0 (default: the first)")->check(cfr::kNonEmpty);
  app.add_option("--json", json_path, "write pairs and ratings as JSON")->check(cfr::kNonEmpty);
  app.add_option("--svg", svg_path, "write the ratings as an SVG picture")->check(cfr::kNonEmpty);
  app.add_option("--rules", rules_json, R"(rule overrides as a JSON object, e.g. '{"n_colors":3}')")->check(cfr::kNonEmpty);
  cfr::add_external_player_options(app, flags);
  if (const auto rc = cfr::parse_command_line(app, "cfr-ladder", argc, argv)) return *rc;

  return cfr::run_app("cfr-ladder", [&] {
    if (names.size() < 2) throw cfr::InputError("PLAYER: a ladder needs at least two players");
    for (std::size_t i = 0; i < names.size(); ++i)
      if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
          names.begin() + static_cast<std::ptrdiff_t>(i))
        throw cfr::InputError(fmt::format("PLAYER: '{}' is listed twice", names[i]));
    if (anchor.empty()) anchor = names.front();
    const auto anchor_it = std::find(names.begin(), names.end(), anchor);
    if (anchor_it == names.end())
      throw cfr::InputError(fmt::format("--anchor '{}' is not one of the players: {}", anchor, cfr::join_names(names)));
    // The output files are checked before the first game (a round robin may take hours).
    if (!json_path.empty()) cfr::require_output_file(json_path, "--json");
    if (!svg_path.empty()) cfr::require_output_file(svg_path, "--svg");
    const Rules rules = rules_json.empty() ? Rules{} : rules_from_json_text(rules_json, "--rules");
    // External players' logs beside the ladder's files by default (else ExternalOptions' default:
    // a folder of this process in the system's temporary directory; never the current directory).
    for (const std::string& file : {json_path, svg_path}) {
      if (!flags.external.log_dir.empty() || file.empty()) continue;
      const std::filesystem::path dir = std::filesystem::absolute(file).parent_path();
      if (std::filesystem::is_directory(dir)) flags.external.log_dir = dir.string();
    }
    // Every player is built (checkpoints read and checked) before the first game.
#ifdef CFR_ARENA_CHECKPOINTS
    std::vector<cfr::AnyPlayer> players;
    for (const auto& n : names) players.push_back(cfr::make_any_player(n, rules, flags.external));
#else
    std::vector<AnyPlayer> players;
    for (const auto& n : names) players.push_back(make_player(n, rules, flags.external));
#endif
    auto side = [&](std::size_t i) { return players[i].player(); };
    std::atomic<bool> stop{false};
    const cfr::StopSignals signals(stop, "cfr-ladder", "nothing was written");
    std::vector<cfr::PairResult> pairs;
    nlohmann::json pairs_json = nlohmann::json::array();
    const std::size_t total = names.size() * (names.size() - 1) / 2;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t a = 0; a < names.size(); ++a)
      for (std::size_t b = a + 1; b < names.size(); ++b) {
        MatchReport r = run_match_players(side(a), side(b),
                                          {.games = games,
                                           .seed = seed,
                                           .max_steps = max_steps,
                                           .rules = rules,
                                           .stop = &stop,
                                           .stop_on_fault = flags.stop_on_fault});
        if (!r.stop_cause.empty()) {
          std::cerr << fmt::format("cfr-ladder: stopped at the first fault (--stop-on-fault): {}; nothing was written\n",
                                   r.stop_cause);
          return cfr::kExitPlayerFault;
        }
        if (r.stopped) {
          std::cerr << "cfr-ladder: stopped by a signal before the round robin finished; nothing was written\n";
          return kExitStopped;
        }
        r.bot0 = names[a];  // the players' names, not their kinds ("checkpoint")
        r.bot1 = names[b];
        pairs.push_back(
            {.a = static_cast<int>(a), .b = static_cast<int>(b), .games = r.games, .a_score = r.wins + 0.5 * r.draws});
        pairs_json.push_back(nlohmann::json::parse(report_json(r)));
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cerr << fmt::format("cfr-ladder: pair {}/{}: {} vs {}: {}/{}/{} (win rate {:.3f}); {:.0f} s elapsed, ETA {:.0f} s\n",
                                 pairs.size(), total, names[a], names[b], r.wins, r.draws, r.losses, r.win_rate(), elapsed,
                                 elapsed / static_cast<double>(pairs.size()) * static_cast<double>(total - pairs.size()));
      }
    auto ratings = cfr::bradley_terry(names, pairs, static_cast<int>(anchor_it - names.begin()));
    std::sort(ratings.begin(), ratings.end(), [](const cfr::Rating& x, const cfr::Rating& y) { return x.elo > y.elo; });
    std::cout << fmt::format("{:<4} {:<40} {:>7} {:>17} {:>9} {:>6}\n", "rank", "player", "Elo", "95% interval", "score",
                             "games");
    nlohmann::json ratings_json = nlohmann::json::array();
    for (std::size_t i = 0; i < ratings.size(); ++i) {
      const auto& r = ratings[i];
      std::cout << fmt::format("{:<4} {:<40} {:>+7.0f} {:>+8.0f}…{:<+8.0f} {:>9.1f} {:>6}\n", i + 1, r.name, r.elo, r.lo, r.hi,
                               r.score, r.games);
      ratings_json.push_back(
          {{"name", r.name}, {"elo", r.elo}, {"elo_lo95", r.lo}, {"elo_hi95", r.hi}, {"score", r.score}, {"games", r.games}});
    }
    std::cout << fmt::format(
        "(Bradley–Terry, {} games per pair on duplicate deals, seed {}; anchor {} = 0; one virtual "
        "drawn game per pair as a prior)\n",
        games, seed, anchor);
    if (!json_path.empty()) {
      const nlohmann::json j = {{"games_per_pair", games},
                                {"seed", seed},
                                {"max_steps", max_steps},
                                {"anchor", anchor},
                                {"model", "bradley_terry_elo"},
                                {"prior_games_per_pair", 1},
                                {"players", names},
                                {"pairs", pairs_json},
                                {"ratings", ratings_json}};
      cfr::write_file_atomic(json_path, j.dump(1) + "\n");
    }
    if (!svg_path.empty())
      cfr::write_file_atomic(svg_path,
                             ladder_svg(ratings, fmt::format("Lost Cities ladder: {} games per pair, anchor {}", games, anchor)));
    return 0;
  });
}
