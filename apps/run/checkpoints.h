#pragma once
// A checkpoint directory written (the format: apps/run/checkpoint_format.h): the networks (nets.pt),
// the resolved config, the memories when asked, then meta.json with every file's checksum; the
// run's rotation of checkpoint directories and `latest`. Written by the run context
// (apps/algorithms/context.h) and by cfr-export (apps/players/checkpoint_policy.h, export_policy).
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "apps/run/checkpoint_format.h"
#include "engine/core/rng.h"

namespace cfr {

class NetworkSet;

/// What a checkpoint of one iteration holds besides the networks.
struct CheckpointWrite {
  std::string run_dir;
  int iteration = 0;
  std::string config_toml;
  CheckpointShape shape;
  Rng::StateWords train_rng{};
  /// Writes memories.bin into the given path (empty: the checkpoint has no memories).
  std::function<void(const std::string& path)> write_memories;
  /// A trainer's own small files (name, contents), e.g. MMD's league.json: written and
  /// checksummed with the others.
  std::vector<std::pair<std::string, std::string>> extra_files;
  int save_every = 0;       // the previous latest is kept only on these boundaries
  int previous_latest = 0;  // the checkpoint that `latest` named before (0: none)
};

/// The files of a checkpoint into directory `dir` (which exists): nets.pt, config.toml,
/// memories.bin when asked, then meta.json with their checksums read back from disk.
void write_checkpoint_files(const NetworkSet& nets, const std::string& dir, const CheckpointWrite& w);
/// run_dir/checkpoints/iter-NNNNNN: write_checkpoint_files into a temporary directory, renamed,
/// then `latest` replaced and the previous latest removed unless it is on a save_every boundary.
void write_checkpoint_dir(const NetworkSet& nets, const CheckpointWrite& w);

}  // namespace cfr
