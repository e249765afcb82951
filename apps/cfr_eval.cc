// cfr-eval: evaluates a trained checkpoint. Lost Cities: matches against bots under the
// evaluation protocol (the strategy network played greedily). Kuhn/Leduc: exact exploitability.
// A run directory is evaluated at its newest complete checkpoint, also while the run trains (a
// checkpoint removed by the run's rotation while it is read gives way to the newer one); the
// iteration evaluated is printed (text: a first line; --json: "iteration" and "checkpoint" fields).
//   cfr-eval CHECKPOINT|RUN_DIR [--opponent NAME|checkpoint:PATH]... [--games N] [--seed S] [--max-steps M] [--json]
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "apps/players/checkpoint_policy.h"
#include "engine/core/errors.h"
#include "engine/core/resources.h"
#include "engine/games/bots.h"
#include "engine/games/games.h"
#include "engine/games/match.h"
#include "engine/tabular/best_response.h"

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-eval: evaluate a cfr-run checkpoint against bots (Lost Cities) or exactly (Kuhn, Leduc)"};
  std::string path;
  std::vector<std::string> opponents;
  int games = 1000, max_steps = 10000;
  std::uint64_t seed = 0;
  bool json = false;
  std::string play = "greedy";
  cfr::MatchPlayerFlags flags;
  // An empty value is refused (CLI11 would take it as "not given"); seeds are checked as a range
  // because CLI11 2.1 wraps "-1" and saturates values beyond 64 bits.
  app.add_option("CHECKPOINT", path, "checkpoint directory, or a run directory (its latest checkpoint)")
      ->required()
      ->check(cfr::kNonEmpty);
  app.add_option("--opponent", opponents,
                 "bot, checkpoint:PATH or external:COMMAND to play (repeatable; default: the run's evaluation.opponents)")
      ->check(cfr::kNonEmpty);
  app.add_option("--games", games, "games per opponent")->check(cfr::kDecimal)->check(cfr::kCountRange);
  app.add_option("--seed", seed, "match seed (deal d, played twice with seats swapped, dealt with seed + d)")
      ->check(cfr::kDecimal)
      ->check(cfr::kSeedRange);
  app.add_option("--max-steps", max_steps, "action cap per game")->check(cfr::kDecimal)->check(cfr::kCountRange);
  app.add_option("--play", play,
                 "how the checkpoint plays: greedy (argmax of its legal logits) or sampled (its softmax, the average strategy)")
      ->check(CLI::IsMember({"greedy", "sampled"}));
  app.add_flag("--json", json, "one JSON line per result");
  cfr::add_external_player_options(app, flags);
  if (const auto rc = cfr::parse_command_line(app, "cfr-eval", argc, argv)) return *rc;
  return cfr::run_app("cfr-eval", [&] {
    const cfr::CheckpointPolicy policy = cfr::load_checkpoint_policy(path);
    const auto& cfg = policy.config;
    if (cfr::is_enumerable(cfg.run.game)) {
      for (const char* flag : {"--opponent", "--games", "--seed", "--max-steps", "--play"})
        if (app.count(flag) > 0)
          throw cfr::InputError(fmt::format("{}: {} is evaluated exactly (exploitability); {} applies to lost_cities checkpoints",
                                            flag, cfg.run.game, flag));
      const cfr::GameTree tree = cfr::build_game_tree(cfg.run.game);
      const auto r = cfr::exploitability(policy.tabular(tree));
      if (json)
        std::cout << fmt::format("{{\"game\":\"{}\",\"iteration\":{},\"nash_conv\":{:.9g},\"exploitability\":{:.9g}}}\n",
                                 cfg.run.game, policy.iteration, r.nash_conv, r.exploitability);
      else
        std::cout << fmt::format("{} ({}, iteration {}): NashConv {:.6f}, exploitability {:.6f} ({:.1f} mA/g)\n", path,
                                 cfg.run.game, policy.iteration, r.nash_conv, r.exploitability, 1e3 * r.exploitability);
      return 0;
    }
    if (opponents.empty()) opponents = cfg.evaluation.opponents;
    // Named as a match player that loads it would be ("checkpoint:PATH"), so that reports of two
    // checkpoints are told apart.
    auto me = policy.batch_bot(play == "sampled" ? cfr::PlayMode::kSampled : cfr::PlayMode::kGreedy,
                               (play == "sampled" ? "checkpoint-sampled:" : "checkpoint:") + path);
    std::vector<cfr::AnyPlayer> others;  // every name checked before the first game
    for (const auto& name : opponents) {
      try {
        others.push_back(cfr::make_any_player(name, cfg.rules, flags.external));
      } catch (const cfr::InputError& e) {
        throw cfr::InputError(fmt::format("--opponent {}: {}", name, e.what()));
      }
    }
    // Which checkpoint was evaluated: a run directory's latest when it was loaded (a run in
    // training moves on while it plays).
    if (!json) std::cout << fmt::format("{}: iteration {} ({})\n", path, policy.iteration, policy.checkpoint_dir);
    for (const auto& other : others) {
      const auto r = cfr::lc::run_match_players(
          {.batch = me.get()}, other.player(),
          {.games = games, .seed = seed, .max_steps = max_steps, .rules = cfg.rules, .stop_on_fault = flags.stop_on_fault});
      if (json) {
        auto j = nlohmann::json::parse(cfr::lc::report_json(r));
        j["iteration"] = policy.iteration;
        j["checkpoint"] = policy.checkpoint_dir;
        std::cout << j.dump() << "\n";
      } else {
        std::cout << cfr::lc::format_report(r);
      }
      if (!r.stop_cause.empty()) {
        std::cerr << fmt::format("cfr-eval: stopped at the first fault (--stop-on-fault): {}\n", r.stop_cause);
        return cfr::kExitPlayerFault;
      }
    }
    return 0;
  });
}
