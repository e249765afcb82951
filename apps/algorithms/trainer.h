#pragma once
// What cfr-run drives: the Trainer interface every algorithm's trainer implements, where it
// writes, and what its factory (AlgorithmInfo::make_trainer, apps/run/algorithm_registry.h) gets.
// LibTorch-free.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/run/algorithm_registry.h"
#include "apps/run/options.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

class Distributed;
class Evaluator;
struct Config;

/// Where a trainer writes and how it is driven.
struct TrainerIo {
  std::string run_dir;                      // exists (the driver created it)
  std::string config_toml;                  // the resolved config, copied into every checkpoint
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM: finish the current step and return
  bool progress = false;                    // a live progress line on stderr
  Distributed* dist = nullptr;              // an MPI job of ≥ 2 processes (only for algorithms that declare it), else null
};

/// The network that plays of a trained policy (a run directory, a checkpoint directory or an
/// exported model), loaded by the driver for a trainer's fixed opponents (MMD's mmd.opponents):
/// algorithms do not include the checkpoint players above them.
struct FixedPolicy {
  std::shared_ptr<void> owner;     // keeps `evaluator` alive
  Evaluator* evaluator = nullptr;  // logits over the actions; never trained
  std::string game;                // the run.game it was trained on
  GameSettings settings;           // its rules and encoding
  int input_width = 0, num_actions = 0;
  int iteration = 0;
  std::string checkpoint_dir;  // the checkpoint loaded
  /// Its weights (NetworkSet::published_weights layout) and shape, for a trainer that starts
  /// from it (mmd.initial_policy).
  std::vector<float> weights;
  int hidden_size = 0, num_layers = 0;
  std::string activation;
  /// The encoding blocks its first layer was widened for, to read the run's encoding
  /// ("encoding.slot_cards, ..."; empty: none): it plays as before (widen_policy_inputs).
  std::string widened;
};
/// Loads `path` with network.invariant_chunk = `invariant_chunk`; a Lost Cities policy whose
/// encoding lacks some of `run`'s blocks (the same rules) is widened to read `run`'s encoding.
/// InputError naming what is wrong.
using PolicyLoader = std::function<FixedPolicy(const std::string& path, int invariant_chunk, const GameSettings& run)>;

/// What an algorithm's trainer factory gets: the config (its own options are built from it, once,
/// by the factory), the registration, the shared typed options, where it writes, and the game
/// settings its traversal adapter is made from. Valid during the factory call only.
struct TrainerSetup {
  const Config& config;
  const AlgorithmInfo& algorithm;
  const RunOptions& run;
  const TrainerIo& io;
  GameSettings game;
  PolicyLoader load_policy;  // null in programs that cannot load checkpoints
};

/// What cfr-run drives.
class Trainer {
 public:
  virtual ~Trainer() = default;
  /// Loads checkpoint directory `ck` (its files verified; game, network set and shape checked):
  /// networks, optimiser states, the trainer's RNG and, when saved, the memories. Returns its
  /// iteration.
  virtual int restore(const std::string& ck) = 0;
  /// The learner (or a single process): trains iterations first, first + 1, … up to
  /// max_iterations, max_minutes or a stop request, appending to the run directory's
  /// metrics.jsonl and log.txt; `note` is said after the start line and `first_metrics` merged
  /// into the first metrics line (a resume's verdict and record). Returns the last completed
  /// iteration.
  virtual int train(int first, nlohmann::json first_metrics, const std::string& note) = 0;
  /// A traversal rank of a distributed run (AlgorithmInfo::distributed): traverses its share of
  /// every phase the learner announces, until it says stop. Returns the iterations served.
  virtual int serve_learner() { return 0; }
  /// Whether a resume is exact only with the memories saved (Deep CFR's reservoirs span
  /// iterations; MMD's samples live one iteration and need none).
  virtual bool resume_needs_memories() const { return true; }
};

}  // namespace cfr
