#pragma once
// The Deep CFR training loop behind cfr-run (deep-cfr.md §1): per iteration, for each player a
// traversal phase whose samples stream through a SamplePipe into the reservoir memories (the
// consumer thread inserts while traversals run), then the networks train on the memories and
// the new weights are published; evaluations, metrics.jsonl and the log line follow.
#include <atomic>
#include <string>

#include "apps/checkpoint_format.h"
#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/config.h"

namespace cfr {

class Distributed;

struct RunOptions {
  std::string run_dir;              // created if missing
  bool resume = false;              // continue the run in run_dir from its latest checkpoint
  bool allow_training_changes = false;  // resume with other values of training keys (not the same run)
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM: finish the current step and return
  bool progress = false;            // a live progress line on stderr
  Distributed* dist = nullptr;      // an MPI job of ≥ 2 processes (apps/distributed.h), else null
};

/// Checkpoints: see apps/checkpoint_format.h.
class NetworkSet;
class GameTree;
class TabularPolicy;
class Evaluator;
class ReservoirMemory;
enum class RmFallback;  // engine/traversal.h

/// Loads checkpoint directory `ck` into `nets` after checking it matches cfg and the set (format
/// version, game, networks, shape; files verified); returns its iteration.
int load_checkpoint_networks(const std::string& ck, const Config& cfg, NetworkSet& nets);
/// The strategy network's policy on every information set of an enumerable game.
TabularPolicy strategy_policy(const GameTree& tree, Evaluator& strategy);
/// How far an advantage network's regret-matching policy is from that of a perfect fit of its
/// memory (the per-information-set weighted mean of the samples, sample_sums): the L1 distance
/// between the two policies, averaged over `player`'s information sets that hold samples.
double advantage_fit_l1(const GameTree& tree, Evaluator& advantage, const ReservoirMemory& memory, int player,
                        bool linear, RmFallback fallback, double rm_epsilon);
/// Input width of the configured game's encoding and its number of actions.
std::pair<int, int> game_widths(const Config& cfg);

/// Runs the whole training (or resumes it); returns the last completed iteration.
int run_deep_cfr(Config& cfg, const RunOptions& opts);

}  // namespace cfr
