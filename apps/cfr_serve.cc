// cfr-serve: play Lost Cities against bots, shipped models, runs' checkpoints and the programs given
// on its command line, watch training runs and step through transcripts in a browser
// (docs/serve.md). Requests name the opponents it offers, never a program or a path.
//   cfr-serve [--host 127.0.0.1|localhost|::1|ADDRESS] [--port 8080] [--runs DIR]... [--models DIR]
//             [--opponent SPEC]... [--default-opponent ID] [--hint-model ID|none] [--max-games N]
//             [--max-games-per-client N] [--idle-minutes M] [--move-budget S] [--max-connections N]
//             [--allow-host NAME]... [--www DIR] [--chart-js FILE] [--rules JSON] [--move-timeout S] ...
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "apps/serve/server.h"
#include "engine/core/resources.h"
#include "engine/games/bots.h"
#include "engine/games/players.h"
#include "engine/games/replay.h"  // rules_from_json_text
#ifdef CFR_ARENA_CHECKPOINTS
#include <mutex>

#include "apps/players/checkpoint_policy.h"
#include "engine/traversal/traversal.h"        // masked_softmax
#include "engine/traversal/traversal_games.h"  // LostCitiesTraversalGame
#include "sched/evaluator.h"
#endif

#ifndef CFR_SERVE_WWW
#define CFR_SERVE_WWW "apps/serve/www"
#endif
// The shipped models (models/, docs/mmd.md): offered on the play page; the default one is the
// preselected opponent and the hint agent when it is there.
#ifndef CFR_SHIPPED_MODEL
#define CFR_SHIPPED_MODEL "models/lost-cities-styles-4h"
#endif

namespace {

namespace fs = std::filesystem;
using cfr::serve::Offer;

/// What the page shows for an --opponent extra: its kind and the last part of its path or
/// program, never the whole path.
std::string extra_label(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  const std::string kind = spec.substr(0, colon);
  std::string rest = spec.substr(colon + 1);
  if (kind == "external") rest = rest.substr(0, rest.find(' '));
  rest = rest.substr(0, rest.find('?'));
  while (rest.size() > 1 && rest.back() == '/') rest.pop_back();
  return fmt::format("{} {}", kind, fs::path(rest).filename().string());
}

#ifdef CFR_ARENA_CHECKPOINTS
/// A shipped model's name for the page: its manifest's "label", else the folder's name.
std::string model_label(const fs::path& dir) {
  std::ifstream in(dir / "manifest.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_object() && j.contains("label") && j["label"].is_string()) return j["label"].get<std::string>();
  return dir.filename().string() + " (shipped)";
}

/// The hint: the network's move probabilities for the mover (one forward per hint).
cfr::serve::HintFn make_hint(const std::string& path) {
  auto policy = std::make_shared<cfr::CheckpointPolicy>(cfr::load_checkpoint_policy(path));
  struct Scratch {
    std::vector<float> in, out;
    std::vector<cfr::ActionMask> legal;
  };
  auto scratch = std::make_shared<Scratch>();
  return [policy, scratch](const cfr::lc::State& s) {
    const cfr::lc::State* one[] = {&s};
    cfr::forward_states(policy->strategy(), policy->game(), one, scratch->in, scratch->out, scratch->legal);
    const int A = policy->game().num_actions();
    std::vector<float> p(static_cast<std::size_t>(A));
    cfr::masked_softmax(scratch->out.data(), scratch->legal[0], A, p.data());
    return p;
  };
}
#endif

}  // namespace

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-serve: play against the agent, watch training and replay games in a browser"};
  cfr::serve::ServerOptions opts;
  opts.www = CFR_SERVE_WWW;
  opts.chart_js = "/usr/share/javascript/chart.js/chart.min.js";
  std::string rules_json, models_dir, hint_model, default_opponent;
  std::vector<std::string> extras;
  int max_games = 1000, max_per_client = 16, max_connections = 256, max_live_feeds = 32, live_idle_seconds = 60;
  double idle_minutes = 10, move_budget = 10;
  cfr::MatchPlayerFlags flags;
  app.add_option("--host", opts.host,
                 "address to bind: 127.0.0.1 (default), localhost (both loopbacks), ::1, or another address "
                 "(then every request needs the token printed at start)")
      ->check(cfr::kNonEmpty);
  app.add_option("--port", opts.port, "TCP port (0: any free one, printed)")->check(CLI::Range(0, 65535));
  app.add_option("--allow-host", opts.allow_hosts,
                 "a further name requests may use in their Host header, e.g. this machine's name on the network "
                 "(loopback names and bound addresses are always served; repeatable)")
      ->check(cfr::kNonEmpty);
  app.add_option("--runs", opts.runs,
                 "a folder of run directories (or one run) to list and watch; its Lost Cities checkpoints are "
                 "offered as opponents by run name (repeatable)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--models", models_dir,
                 "a folder of shipped models (each a folder with manifest.json), offered as opponents "
                 "(default: the models/ folder beside the default model, when it exists)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--www", opts.www, "the pages' folder (default: the build's copy of apps/serve/www)")->check(cfr::kNonEmpty);
  app.add_option("--chart-js", opts.chart_js, "Chart.js (Debian package libjs-chart.js)")->check(cfr::kNonEmpty);
  app.add_option("--opponent", extras,
                 "an extra opponent for the play page (checkpoint:PATH, external:COMMAND, search:PATH?k=3&n=8, ...; "
                 "repeatable): the only way a program or a path becomes an opponent")
      ->check(cfr::kNonEmpty);
  app.add_option("--default-opponent", default_opponent,
                 "the play page's preselected opponent: an id of GET /api/players (e.g. heuristic_balanced, "
                 "model:lost-cities-styles-4h, extra:1) or an --opponent spec (default: the shipped model when this build "
                 "plays checkpoints and it loads, else heuristic_balanced)")
      ->check(cfr::kNonEmpty);
  app.add_option("--hint-model", hint_model,
                 "the network that answers the play page's hints: an offered network's id (default: the shipped "
                 "model when it loads; none: no hints)")
      ->check(cfr::kNonEmpty);
  app.add_option("--max-games", max_games, "live games at once (then the game idle longest goes, else 503)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--max-games-per-client", max_per_client, "live games of one client address (then 429)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--idle-minutes", idle_minutes, "a game untouched this long is dropped")->check(cfr::finite_range(0.05, 1440.0));
  app.add_option("--move-budget", move_budget, "seconds an opponent may take for one move, then its game is ended")
      ->check(cfr::finite_range(0.1, 3600.0));
  app.add_option("--max-connections", max_connections, "open connections at once, then 503 (kept below the file limit)")
      ->check(cfr::kDecimal)
      ->check(CLI::Range(2, 100000));
  app.add_option("--max-live-feeds", max_live_feeds, "open live feeds (a run page's WebSocket) at once, then 503")
      ->check(cfr::kDecimal)
      ->check(CLI::Range(1, 100000));
  app.add_option("--live-idle-seconds", live_idle_seconds,
                 "a live feed is pinged when silent half this long and closed when no answer comes by the end")
      ->check(cfr::kDecimal)
      ->check(CLI::Range(2, 86400));
  app.add_option("--rules", rules_json, R"(rule overrides as a JSON object, e.g. '{"n_colors":3}')")->check(cfr::kNonEmpty);
  cfr::add_external_player_options(app, flags);
  if (const auto rc = cfr::parse_command_line(app, "cfr-serve", argc, argv)) return *rc;
  return cfr::run_app("cfr-serve", [&] {
    // An installed cfr-serve finds its pages beside it (bin/../share/cfr/www) when the build's are gone.
    if (app.count("--www") == 0 && !fs::is_directory(opts.www)) {
      const auto beside = fs::canonical("/proc/self/exe").parent_path().parent_path() / "share/cfr/www";
      if (fs::is_directory(beside)) opts.www = beside.string();
    }
    opts.play.rules = rules_json.empty() ? cfr::lc::Rules{} : cfr::lc::rules_from_json_text(rules_json, "--rules");
    opts.play.max_games = static_cast<std::size_t>(max_games);
    opts.play.max_games_per_client = static_cast<std::size_t>(max_per_client);
    opts.play.idle_expiry = std::chrono::seconds(static_cast<long>(idle_minutes * 60));
    opts.play.move_budget = std::chrono::milliseconds(static_cast<long>(move_budget * 1000));
    opts.max_connections = static_cast<std::size_t>(max_connections);
    opts.max_live_feeds = static_cast<std::size_t>(max_live_feeds);
    opts.live_idle_s = live_idle_seconds;
    const cfr::lc::Rules rules = opts.play.rules;
    const cfr::lc::ExternalOptions external = flags.external;
    opts.factory = [rules, external](const std::string& spec) {
#ifdef CFR_ARENA_CHECKPOINTS
      return cfr::make_any_player(spec, rules, external);
#else
      return cfr::lc::make_player(spec, rules, external);
#endif
    };
    // The offers, fixed now: bots, shipped models, extras (runs are found by name as they appear).
    for (const auto& b : cfr::lc::bot_names()) opts.offers.push_back({.id = b, .label = b, .kind = "bot", .spec = b});
    std::string shipped_id;
#ifdef CFR_ARENA_CHECKPOINTS
    const fs::path shipped = CFR_SHIPPED_MODEL;
    if (models_dir.empty() && fs::is_directory(shipped.parent_path())) models_dir = shipped.parent_path().string();
    if (!models_dir.empty()) {
      std::vector<fs::path> dirs;
      for (const auto& e : fs::directory_iterator(models_dir))
        if (e.is_directory() && fs::exists(e.path() / "manifest.json")) dirs.push_back(e.path());
      std::sort(dirs.begin(), dirs.end());
      for (const auto& d : dirs) {
        Offer o{.id = "model:" + d.filename().string(),
                .label = model_label(d),
                .kind = "model",
                .spec = "checkpoint:" + d.string(),
                .network = true};
        try {  // offered only when it loads (e.g. --rules it was not trained for: a warning, not an error)
          (void)opts.factory(o.spec);
        } catch (const cfr::InputError& e) {
          std::cerr << fmt::format("cfr-serve: warning: the model {} is not offered: {}\n", d.filename().string(), e.what());
          continue;
        }
        if (d.filename() == shipped.filename()) shipped_id = o.id;
        opts.offers.insert(opts.offers.begin() + static_cast<long>(opts.offers.size() - cfr::lc::bot_names().size()), o);
      }
    }
#else
    (void)models_dir;
#endif
    for (std::size_t i = 0; i < extras.size(); ++i) {
      const std::string& spec = extras[i];
      (void)opts.factory(spec);  // every extra is checked before the server starts (a bad one is exit 2)
      const bool network = spec.rfind("checkpoint:", 0) == 0 || spec.rfind("checkpoint-sampled:", 0) == 0;
      const bool slow = spec.rfind("external:", 0) == 0 || spec.rfind("search:", 0) == 0 || spec.rfind("snapshots:", 0) == 0;
      opts.offers.push_back({.id = fmt::format("extra:{}", i + 1),
                             .label = extra_label(spec),
                             .kind = "extra",
                             .spec = spec,
                             .network = network,
                             .slow = slow});
    }
    // The preselected opponent: an offer's id, or an extra's spec (older command lines).
    const auto find = [&](const std::string& name) -> const Offer* {
      for (const Offer& o : opts.offers)
        if (o.id == name || o.spec == name) return &o;
      return nullptr;
    };
    if (!default_opponent.empty()) {
      const Offer* o = find(default_opponent);
      if (!o)
        throw cfr::InputError(
            fmt::format("--default-opponent {}: not offered (a bot's name, model:NAME, extra:N, or an "
                        "--opponent spec)",
                        default_opponent));
      opts.default_opponent = o->id;
    } else {
      opts.default_opponent = shipped_id.empty() ? "heuristic_balanced" : shipped_id;
    }
#ifdef CFR_ARENA_CHECKPOINTS
    if (hint_model.empty()) hint_model = shipped_id.empty() ? "none" : shipped_id;
    if (hint_model != "none") {
      const Offer* o = find(hint_model);
      if (!o || !o->network)
        throw cfr::InputError(
            fmt::format("--hint-model {}: not an offered network (model:NAME, or an extra checkpoint:)", hint_model));
      opts.play.hint = make_hint(o->spec.substr(o->spec.find(':') + 1));
      opts.play.hint_label = o->label;
    }
#else
    if (!hint_model.empty() && hint_model != "none") throw cfr::InputError("--hint-model: this build plays no networks");
#endif
    return cfr::serve::serve(opts);
  });
}
