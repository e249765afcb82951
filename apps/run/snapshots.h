#pragma once
// Advantage-network snapshots (Single Deep CFR, Steinberger 2019): with checkpoint.keep_snapshots
// a run keeps, for every iteration t, the published weights of both players' advantage (regret)
// networks in run_dir/snapshots/iter-NNNNNN.bin. The average strategy is then the mixture of the
// iterations' regret-matching policies, iteration t drawn with weight t (linear CFR) or 1, once per
// game: what the snapshot player (`snapshots:RUN_DIR`) plays and what the exact evaluation of
// Kuhn/Leduc computes (exploitability_snapshots), without the strategy network's fitting error.
//
// File: "CFRSNAP1", int64 iteration, int64 n, n floats (advantage net 0's then 1's, in
// NetworkSet::published_weights order), then the XXH3-128 checksum (32 hex digits) of everything
// before it. Written atomically. LibTorch-free.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cfr {

/// run_dir/snapshots/iter-NNNNNN.bin.
std::string snapshot_path(const std::string& run_dir, int iteration);
void write_snapshot(const std::string& run_dir, int iteration, std::span<const float> weights);
/// The weights of a snapshot file; InputError naming it when it is not one, is truncated, fails
/// its checksum, or holds another number of floats than `expected` (≥ 0; -1 = any).
std::vector<float> read_snapshot(const std::string& path, std::int64_t expected = -1);
/// The snapshots of a run, (iteration, path) by iteration.
std::vector<std::pair<int, std::string>> list_snapshots(const std::string& run_dir);
/// Removes the snapshots of iterations after `last` (a resumed run continues from `last`).
void trim_snapshots(const std::string& run_dir, int last);
/// A resume's check that the snapshots it goes on from are all there: iterations every, 2·every, …,
/// ≤ last under `dir` (`dir`/snapshots/iter-NNNNNN.bin). Else an InputError "--resume RUN_DIR: the
/// WHAT of iteration K (PATH) is missing; the resumed run would CONSEQUENCE" for the first missing.
void require_snapshots(const std::string& dir, int every, int last, const std::string& run_dir, std::string_view what,
                       std::string_view consequence);

}  // namespace cfr
