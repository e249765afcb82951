#pragma once
// ESCHER's own typed options ([escher] in a config; docs/escher.md), built once from a config by
// escher_options (algorithm.cc). Its regret and strategy phases are Deep CFR's (DeepCfrOptions).
#include <cstdint>

#include "engine/traversal/escher.h"
#include "nets/networks.h"

namespace cfr {

struct Config;

struct EscherRunOptions {
  EscherOptions traversal;      // its trajectories (engine/traversal/escher.h)
  int value_traversals = 1000;  // value trajectories per iteration
  TrainConfig value_training;
  std::int64_t value_capacity = 1'000'000;
  bool reinitialize_value = false;
};

/// ESCHER's options of a config.
EscherRunOptions escher_options(const Config& c);

}  // namespace cfr
