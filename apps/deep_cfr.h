#pragma once
// The Deep CFR training loop behind cfr-run (deep-cfr.md §1): per iteration, for each player a
// traversal phase whose samples stream through a SamplePipe into the reservoir memories (the
// consumer thread inserts while traversals run), then the networks train on the memories and
// the new weights are published; evaluations, metrics.jsonl and the log line follow.
#include <atomic>
#include <string>

#include "apps/config.h"

namespace cfr {

struct RunOptions {
  std::string run_dir;              // created if missing
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT: finish the current step and return
  bool progress = false;            // a live progress line on stderr
};

/// Runs the whole training; returns the number of completed iterations.
int run_deep_cfr(Config& cfg, const RunOptions& opts);

}  // namespace cfr
