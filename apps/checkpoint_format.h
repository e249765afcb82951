#pragma once
// The checkpoint format of cfr-run, without LibTorch (so that fuzzers and tools can read it):
//
//   run_dir/checkpoints/iter-NNNNNN/{meta.json, nets.pt[, memories.bin]}
//   run_dir/checkpoints/latest       names the newest complete checkpoint
//
// A checkpoint is written as a temporary directory (.tmp-iter-NNNNNN) and renamed, then `latest`
// is replaced atomically (write + rename): a crash at any moment leaves `latest` naming a
// complete checkpoint. meta.json: {"format": "cfr-deep-cfr-checkpoint", "version": 1, game,
// iteration, input/output widths, network shape, trainer RNG state, memories}. Loading refuses
// another format, version, game, widths or network shape with a message saying what differs.
#include <cstdint>
#include <iosfwd>
#include <string>

#include "apps/config.h"
#include "engine/rng.h"

namespace cfr {

inline constexpr int kCheckpointVersion = 1;

class ReservoirMemory;

struct CheckpointMeta {
  int iteration = 0;
  Rng::StateWords train_rng{};
  bool memories = false;
};

/// meta.json's text for a checkpoint of `cfg` at `iteration`.
std::string checkpoint_meta_json(const Config& cfg, int iteration, int input_width, int output_width,
                                 const Rng::StateWords& train_rng);
/// Parses and checks meta.json's text (`where` names it in errors) against the config and the
/// game's widths. Every problem is an InputError saying what differs; nothing else is thrown.
CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& where, const Config& cfg,
                                     int input_width, int output_width);
/// Reads checkpoint directory `ck`'s meta.json and checks it (as parse_checkpoint_meta).
CheckpointMeta read_checkpoint_meta(const std::string& ck, const Config& cfg, int input_width, int output_width);
/// Loads memories.bin's three reservoirs (advantage 0, advantage 1, strategy) from `in`; on any
/// error (an InputError) all three are left empty.
void read_checkpoint_memories(std::istream& in, const std::string& where, ReservoirMemory& adv0, ReservoirMemory& adv1,
                              ReservoirMemory& strategy);
/// The directory of the newest checkpoint of a run directory (InputError when there is none).
std::string latest_checkpoint_dir(const std::string& run_dir);

}  // namespace cfr
