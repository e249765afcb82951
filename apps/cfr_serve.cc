// cfr-serve: play Lost Cities against bots, checkpoints and external programs, watch training runs
// and step through transcripts in a browser (docs/serve.md).
//   cfr-serve [--host 127.0.0.1] [--port 8080] [--runs DIR]... [--www DIR] [--chart-js FILE]
//             [--opponent NAME]... [--max-games N] [--rules JSON] [--move-timeout S] [--player-logs DIR]
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/cli.h"
#include "apps/serve/server.h"
#include "engine/games/bots.h"
#include "engine/games/players.h"
#include "engine/games/replay.h"  // rules_from_json_text
#ifdef CFR_ARENA_CHECKPOINTS
#include "apps/checkpoint_policy.h"
#endif

#ifndef CFR_SERVE_WWW
#define CFR_SERVE_WWW "apps/serve/www"
#endif
// The shipped agent (models/, docs/mmd.md): the play page's default opponent when it is there.
#ifndef CFR_SHIPPED_MODEL
#define CFR_SHIPPED_MODEL "models/lost-cities-mmd"
#endif

int main(int argc, char** argv) {
  CLI::App app{"cfr-serve: play against the agent, watch training and replay games in a browser"};
  cfr::serve::ServerOptions opts;
  opts.www = CFR_SERVE_WWW;
  opts.chart_js = "/usr/share/javascript/chart.js/chart.min.js";
  std::string rules_json;
  int max_games = 10000;
  cfr::MatchPlayerFlags flags;
  app.add_option("--host", opts.host, "address to bind (default loopback: 127.0.0.1)")->check(cfr::kNonEmpty);
  app.add_option("--port", opts.port, "TCP port (0: any free one, printed)")->check(CLI::Range(0, 65535));
  app.add_option("--runs", opts.runs, "a folder of run directories (or one run) to list and watch (repeatable)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--www", opts.www, "the pages' folder (default: the build's copy of apps/serve/www)")->check(cfr::kNonEmpty);
  app.add_option("--chart-js", opts.chart_js, "Chart.js (Debian package libjs-chart.js)")->check(cfr::kNonEmpty);
  app.add_option("--opponent", opts.opponents,
                 "an extra opponent for the play page (checkpoint:PATH, external:COMMAND, ...; repeatable)")
      ->check(cfr::kNonEmpty);
  std::string default_opponent;
  app.add_option("--default-opponent", default_opponent,
                 "the play page's preselected opponent (default: the shipped agent checkpoint:" CFR_SHIPPED_MODEL
                 " when this build plays checkpoints and it exists, else heuristic_balanced)")
      ->check(cfr::kNonEmpty);
  app.add_option("--max-games", max_games, "live games at once, then 503")->check(cfr::kDecimal)->check(cfr::kCountRange);
  app.add_option("--rules", rules_json, R"(rule overrides as a JSON object, e.g. '{"n_colors":3}')")->check(cfr::kNonEmpty);
  cfr::add_external_player_options(app, flags);
  if (const auto rc = cfr::parse_command_line(app, "cfr-serve", argc, argv)) return *rc;
  return cfr::run_app("cfr-serve", [&] {
    // An installed cfr-serve finds its pages beside it (bin/../share/cfr/www) when the build's are gone.
    if (app.count("--www") == 0 && !std::filesystem::is_directory(opts.www)) {
      const auto beside = std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "share/cfr/www";
      if (std::filesystem::is_directory(beside)) opts.www = beside.string();
    }
    opts.play.rules = rules_json.empty() ? cfr::lc::Rules{} : cfr::lc::rules_from_json_text(rules_json, "--rules");
    opts.play.max_games = static_cast<std::size_t>(max_games);
    const cfr::lc::Rules rules = opts.play.rules;
    const cfr::lc::ExternalOptions external = flags.external;
    opts.factory = [rules, external](const std::string& name) {
#ifdef CFR_ARENA_CHECKPOINTS
      return cfr::make_any_player(name, rules, external);
#else
      return cfr::lc::make_player(name, rules, external);
#endif
    };
#ifdef CFR_ARENA_CHECKPOINTS
    const std::string shipped = "checkpoint:" CFR_SHIPPED_MODEL;
    if (std::filesystem::is_directory(CFR_SHIPPED_MODEL) &&
        std::find(opts.opponents.begin(), opts.opponents.end(), shipped) == opts.opponents.end()) {
      try {  // offered only when it loads (e.g. --rules it was not trained for: a warning, not an error)
        (void)opts.factory(shipped);
        opts.opponents.insert(opts.opponents.begin(), shipped);
        if (default_opponent.empty()) default_opponent = shipped;
      } catch (const cfr::InputError& e) {
        std::cerr << fmt::format("cfr-serve: warning: the shipped agent is not offered: {}\n", e.what());
      }
    }
#endif
    if (!default_opponent.empty()) {
      opts.default_opponent = default_opponent;
      if (std::find(opts.opponents.begin(), opts.opponents.end(), default_opponent) == opts.opponents.end()) {
        const auto bots = cfr::lc::bot_names();
        if (std::find(bots.begin(), bots.end(), default_opponent) == bots.end()) opts.opponents.push_back(default_opponent);
      }
    }
    // Every extra opponent is checked before the server starts (a bad name is exit 2).
    for (const auto& o : opts.opponents) (void)opts.factory(o);
    return cfr::serve::serve(opts);
  });
}
