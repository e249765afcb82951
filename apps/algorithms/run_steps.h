#pragma once
// Steps every training algorithm's iteration shares (apps/algorithms/<name>/trainer.cc, through
// the run context apps/algorithms/context.h): a step's stop, and playing the Lost Cities bots
// with the network that plays (above the checkpoint players, apps/players/checkpoint_policy.h). One home,
// so that Deep CFR, ESCHER and MMD evaluations are the same numbers. Checkpoint directories:
// apps/run/checkpoints.h.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/run/play_mode.h"
#include "engine/core/rng.h"
#include "engine/games/lost_cities.h"

namespace cfr {

class Evaluator;
class NetworkSet;
struct LostCitiesTraversalGame;

/// A stop request seen inside an iteration's step: the iteration is abandoned where it is
/// (thrown by a trainer's step, caught by RunContext::run, apps/algorithms/context.h).
struct StepInterrupted {
  const char* step;
};

/// Evaluation against bots: games per opponent (duplicate deals), the deals' seed, the action cap.
struct BotEvaluation {
  std::vector<std::string> opponents;
  int games = 100;
  std::uint64_t seed = 0;
  int max_steps = 10000;
  lc::Rules rules;
  PlayMode play = PlayMode::kGreedy;
  const std::atomic<bool>* stop = nullptr;
};
struct BotEvaluationResult {
  nlohmann::json reports = nlohmann::json::object();  // per opponent: lc::report_json
  std::string text;                                   // "  vs NAME 0.52 (+3.1)" per opponent
  bool stopped = false;                               // a stop request ended it early
};
/// The network `policy` (logits over the actions) plays every opponent in batched matches.
/// games = 0: nothing is played and the result is empty (no reports, no text), so that no
/// evaluation is printed or written to metrics.jsonl as if it had happened.
BotEvaluationResult evaluate_against_bots(Evaluator& policy, const LostCitiesTraversalGame& game, const BotEvaluation& e);

}  // namespace cfr
