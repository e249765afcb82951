#pragma once
// MMD's own typed options ([mmd] in a config; docs/mmd.md), built once from a config by
// mmd_options (algorithm.cc). The run's other options (seed, networks, scheduler, learning rate,
// evaluation, checkpoints) are the shared RunOptions (apps/algorithms/run/options.h).
#include <cstdint>
#include <string>

#include "engine/traversal/mmd.h"
#include "nets/networks.h"

namespace cfr {

struct Config;

struct MmdOptions {
  int rollouts_per_iteration = 256;  // self-play games per iteration
  MmdRolloutOptions rollout;
  int epochs = 4;                    // passes over an iteration's samples (policy and value)
  int batch_size = 1024;
  TrainConfig::PolicyGradientTerms terms;  // clip, magnet weight, entropy (bc_weight: below)
  int magnet_every = 20;             // iterations between moves of the magnet to π (0: it stays π's start)
  double bc_weight = 0;              // weight of the cloning term at iteration 1
  int bc_fade_iterations = 0;        // it falls linearly to 0 at this iteration (0: it never fades)
  int snapshot_every = 10;           // iterations between snapshots of π kept as opponents
  int snapshots_kept = 20;           // the newest this many are drawn from
  std::int64_t capacity = 1'000'000; // samples an iteration keeps (a reservoir beyond)
  std::string bot = "heuristic_balanced";  // the bot of bot_share and bc_weight (lost_cities)
};

/// MMD's options of a config ([mmd]; its cut-off value is traversal.cutoff_value_mode's).
MmdOptions mmd_options(const Config& c);

}  // namespace cfr
