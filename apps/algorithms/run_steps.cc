#include "apps/algorithms/run_steps.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "apps/players/checkpoint_policy.h"
#include "apps/run/run_files.h"
#include "engine/core/checksum.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/games/bots.h"
#include "engine/games/match.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"

namespace cfr {

namespace fs = std::filesystem;

BotEvaluationResult evaluate_against_bots(Evaluator& policy, const LostCitiesTraversalGame& game, const BotEvaluation& e) {
  BotEvaluationResult out;
  if (e.games <= 0) return out;  // evaluation.games = 0: nothing played, nothing reported
  auto me = make_strategy_batch_bot(policy, game, e.play);
  for (const auto& name : e.opponents) {
    auto bot = lc::make_bot(name, e.rules);
    const auto r = lc::run_match_batched(
        *me, *bot, {.games = e.games, .seed = e.seed, .max_steps = e.max_steps, .rules = e.rules, .stop = e.stop});
    if (r.stopped) {
      out.stopped = true;
      return out;
    }
    out.reports[name] = nlohmann::json::parse(lc::report_json(r));
    out.text += fmt::format("  vs {} {:.2f} ({:+.1f})", name, r.win_rate(), r.avg_diff());
  }
  return out;
}

}  // namespace cfr
