#pragma once
// The checkpoint format of cfr-run, without LibTorch (so that fuzzers and tools can read it):
//
//   run_dir/checkpoints/iter-NNNNNN/{meta.json, nets.pt, config.toml[, memories.bin]}
//   run_dir/checkpoints/latest       names the newest complete checkpoint
//
// A checkpoint is written as a temporary directory (.tmp-iter-NNNNNN) and renamed, then `latest`
// is replaced atomically (write + rename): a crash at any moment leaves `latest` naming a
// complete checkpoint. meta.json: {"format": "cfr-deep-cfr-checkpoint", "version": 2, game,
// iteration, networks (the algorithm's set: name, input and output width of each), network shape,
// trainer RNG state, memories, files, checksum}:
// "files" records the size and XXH3-128 checksum of every other file of the checkpoint (config.toml
// is the resolved config the checkpoint was trained with), "checksum" that of meta.json's other
// fields. Loading refuses another format, version, game, network set or shape with a message
// saying what differs, and any file whose size or checksum is not the one recorded, naming it.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "apps/run/config.h"
#include "engine/core/checksum.h"
#include "engine/core/rng.h"
#include "nets/network_spec.h"

namespace cfr {

inline constexpr int kCheckpointVersion = 2;  // 2: files and checksums (version 1 had neither)

class ReservoirMemory;

struct CheckpointMeta {
  int iteration = 0;
  Rng::StateWords train_rng{};
  bool memories = false;
  std::map<std::string, FileChecksum> files;  // file name in the checkpoint directory → size, checksum
};

/// What a checkpoint must match to be loaded: the game and the networks' shape (the network set
/// is matched too, see below).
struct CheckpointShape {
  std::string game;
  int hidden_size = 0;
  int num_layers = 0;
  std::string activation;
};
/// The shape of a config's checkpoints.
CheckpointShape checkpoint_shape(const Config& cfg);

/// meta.json's text for a checkpoint of `shape` at `iteration` whose other files are `files`
/// (memories: whether memories.bin is among them).
std::string checkpoint_meta_json(const CheckpointShape& shape, bool memories, int iteration, const NetworkSpecs& nets,
                                 const Rng::StateWords& train_rng, const std::map<std::string, FileChecksum>& files);
/// Parses and checks meta.json's text (`where` names it in errors) against the shape and the
/// algorithm's network set (names and widths), and its own checksum. Every problem is an InputError saying what differs;
/// nothing else is thrown.
CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& where, const CheckpointShape& shape,
                                     const NetworkSpecs& nets);
/// The names of the networks meta.json's text lists, in its order; empty when the text is
/// unreadable or lists none (parse_checkpoint_meta then says what is wrong). An exported policy
/// (export_policy in apps/players/checkpoint_policy.h) lists fewer than its algorithm's set: the
/// network that plays, and the value network when it was exported with one.
std::vector<std::string> meta_network_names(const std::string& text);
/// Checks that every file meta.json lists in checkpoint directory `ck` has the recorded size and
/// checksum (InputError naming the file otherwise).
void verify_checkpoint_files(const std::string& ck, const CheckpointMeta& meta);
/// Reads checkpoint directory `ck`'s meta.json, checks it (as parse_checkpoint_meta) and verifies
/// its files.
CheckpointMeta read_checkpoint_meta(const std::string& ck, const CheckpointShape& shape, const NetworkSpecs& nets);
/// Reads and verifies checkpoint directory `ck` (meta.json's own checksum, then every file it
/// lists) without comparing it with a config: before its config.toml is trusted.
CheckpointMeta verify_checkpoint(const std::string& ck);
/// Loads memories.bin's three reservoirs (advantage 0, advantage 1, strategy) from `in`; on any
/// error (an InputError) all three are left empty.
void read_checkpoint_memories(std::istream& in, const std::string& where, ReservoirMemory& adv0, ReservoirMemory& adv1,
                              ReservoirMemory& strategy);
/// The directory of the newest checkpoint of a run directory (InputError when there is none).
std::string latest_checkpoint_dir(const std::string& run_dir);

}  // namespace cfr
