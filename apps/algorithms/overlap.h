#pragma once
// Overlapped iterations (mmd.overlap, deep_cfr.overlap; issue 32 item 3): the next iteration's
// rollouts or traversals run on a thread of their own while this iteration's networks train,
// against the networks published one iteration before. What a checkpoint keeps of that work, so
// that a resume plays it again exactly: one home for both algorithms' record.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cfr {

/// The work a checkpoint leaves pending: the iteration it belongs to, the published weights it
/// played against (the algorithm's choice of networks, flattened) and the algorithm's own fields.
struct OverlapRecord {
  int iteration = 0;
  nlohmann::json fields = nlohmann::json::object();
  std::vector<float> weights;
};

/// The checkpoint's extra files (RunContext::write_checkpoint) of `r`: overlap.json (the
/// iteration, the weights' count and the fields) and overlap_weights.bin.
std::vector<std::pair<std::string, std::string>> overlap_files(const OverlapRecord& r);

/// Checkpoint `ck`'s record, which must be of `iteration` with `weights` floats and hold each of
/// `integer_fields` as an integer; nullopt when the checkpoint has none (written without overlap:
/// the work is done at once). InputError naming the file and `key` (the option) otherwise.
std::optional<OverlapRecord> read_overlap_files(const std::string& ck, const std::string& key, int iteration, std::size_t weights,
                                                std::span<const char* const> integer_fields = {});

}  // namespace cfr
