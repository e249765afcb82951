#pragma once
// MMD's own typed options ([mmd] in a config; docs/mmd.md), built once from a config by
// mmd_options (algorithm.cc). The run's other options (seed, networks, scheduler, learning rate,
// evaluation, checkpoints) are the shared RunOptions (apps/run/options.h).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/traversal/mmd.h"
#include "nets/networks.h"

namespace cfr {

struct Config;

struct MmdOptions {
  int rollouts_per_iteration = 256;  // self-play games per iteration
  MmdRolloutOptions rollout;
  int epochs = 4;  // passes over an iteration's samples (policy and value)
  int batch_size = 1024;
  TrainConfig::PolicyGradientTerms terms;  // clip, magnet weight, entropy (bc_weight: below)
  int magnet_every = 20;                   // iterations between moves of the magnet to π (0: it stays π's start)
  double bc_weight = 0;                    // weight of the cloning term at iteration 1
  int bc_fade_iterations = 0;              // it falls linearly to 0 at this iteration (0: it never fades)
  int snapshot_every = 10;                 // iterations between snapshots of π kept as opponents
  int snapshots_kept = 20;                 // the newest this many are drawn from
  std::int64_t capacity = 1'000'000;       // samples an iteration keeps (a reservoir beyond)
  std::string bot = "heuristic_balanced";  // the bot of bot_share and bc_weight (lost_cities)
  /// Whose moves the cloning term (bc_weight) follows: "bot" (mmd.bot's, at every learning
  /// decision) or "search" (determinized search over the rollouts' networks on search_share of
  /// them: expert iteration; docs/mmd.md "Search teacher").
  std::string teacher = "bot";
  MmdSearchTeacherOptions search;  // mmd.search_* (share 0 unless teacher = "search"; value_scale = reward_scale)
  /// The league (rollout.opponent_share of the rollouts): fixed opponents, each a bot's name or
  /// checkpoint:PATH, drawn with weight max(1 − r, 0.02)^opponent_priority where r is the
  /// learner's running score rate against it (wins + draws / 2 over games, both decayed by
  /// opponent_decay per iteration; 1/2 before any game). opponent_priority = 0: uniform.
  std::vector<std::string> opponents;
  std::string initial_policy;  // "checkpoint:PATH": π (and the magnet) start as its network that plays
  double opponent_priority = 0;
  double opponent_decay = 0.95;
  /// The next iteration's rollouts play while this iteration's samples train, against the
  /// networks published one iteration before (one process; docs/mmd.md "Overlap").
  bool overlap = false;
  /// false: the policy (and so the magnet and the snapshots) stays as it is and only the value
  /// network trains: policy evaluation, a critic fitted to a fixed policy's games (e.g. the
  /// search player's leaves over self-play; docs/mmd.md "A critic for a fixed policy").
  bool train_policy = true;
};

/// What an mmd.opponents entry names: a bot of the game (`bot`), or a trained policy (`path`).
struct MmdOpponentName {
  std::string bot;
  std::string path;
  bool greedy = true;  // checkpoint:PATH plays greedily, checkpoint-sampled:PATH samples
};
/// InputError naming mmd.opponents and the entry when it is neither a bot nor checkpoint:PATH
/// (greedy play, as in matches) or checkpoint-sampled:PATH (its softmax).
MmdOpponentName parse_mmd_opponent(const std::string& entry, const std::string& where);

/// MMD's options of a config ([mmd]; its cut-off value is traversal.cutoff_value_mode's).
MmdOptions mmd_options(const Config& c);

}  // namespace cfr
