#pragma once
// Steps every training algorithm's iteration shares (apps/algorithms/<name>/trainer.cc, through
// the run context apps/algorithms/run/context.h): writing a checkpoint directory and playing the
// Lost Cities bots with the network that plays. One home, so
// that Deep CFR, ESCHER and MMD checkpoints and evaluations are the same files and numbers.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/checkpoint_format.h"
#include "apps/play_mode.h"
#include "engine/core/rng.h"
#include "engine/games/lost_cities.h"

namespace cfr {

class Evaluator;
class NetworkSet;
struct LostCitiesTraversalGame;

/// A stop request seen inside an iteration's step: the iteration is abandoned where it is
/// (thrown by a trainer's step, caught by RunContext::run, apps/algorithms/run/context.h).
struct StepInterrupted {
  const char* step;
};

/// What a checkpoint of one iteration holds besides the networks.
struct CheckpointWrite {
  std::string run_dir;
  int iteration = 0;
  std::string config_toml;
  CheckpointShape shape;
  Rng::StateWords train_rng{};
  /// Writes memories.bin into the given path (empty: the checkpoint has no memories).
  std::function<void(const std::string& path)> write_memories;
  int save_every = 0;       // the previous latest is kept only on these boundaries
  int previous_latest = 0;  // the checkpoint that `latest` named before (0: none)
};

/// The files of a checkpoint into directory `dir` (which exists): nets.pt, config.toml,
/// memories.bin when asked, then meta.json with their checksums read back from disk.
void write_checkpoint_files(const NetworkSet& nets, const std::string& dir, const CheckpointWrite& w);
/// run_dir/checkpoints/iter-NNNNNN: write_checkpoint_files into a temporary directory, renamed,
/// then `latest` replaced and the previous latest removed unless it is on a save_every boundary.
void write_checkpoint_dir(const NetworkSet& nets, const CheckpointWrite& w);

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
  std::string text;                                  // "  vs NAME 0.52 (+3.1)" per opponent
  bool stopped = false;                              // a stop request ended it early
};
/// The network `policy` (logits over the actions) plays every opponent in batched matches.
/// games = 0: nothing is played and the result is empty (no reports, no text), so that no
/// evaluation is printed or written to metrics.jsonl as if it had happened.
BotEvaluationResult evaluate_against_bots(Evaluator& policy, const LostCitiesTraversalGame& game, const BotEvaluation& e);

}  // namespace cfr
