#include "apps/algorithms/overlap.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

namespace {
constexpr const char* kOverlapFile = "overlap.json";
constexpr const char* kOverlapWeightsFile = "overlap_weights.bin";
}  // namespace

std::vector<std::pair<std::string, std::string>> overlap_files(const OverlapRecord& r) {
  nlohmann::json j = r.fields;
  j["iteration"] = r.iteration;
  j["weights"] = r.weights.size();
  std::string bytes(reinterpret_cast<const char*>(r.weights.data()), r.weights.size() * sizeof(float));
  return {{kOverlapFile, j.dump() + "\n"}, {kOverlapWeightsFile, std::move(bytes)}};
}

std::optional<OverlapRecord> read_overlap_files(const std::string& ck, const std::string& key, int iteration, std::size_t weights,
                                                std::span<const char* const> integer_fields) {
  namespace fs = std::filesystem;
  const fs::path json_path = fs::path(ck) / kOverlapFile, bin_path = fs::path(ck) / kOverlapWeightsFile;
  if (!fs::exists(json_path)) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(json_path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not {}'s record ({})", json_path.string(), key, e.what()));
  }
  bool valid = j.is_object() && j.contains("iteration") && j["iteration"].is_number_integer() && j["iteration"] == iteration &&
               j.contains("weights") && j["weights"] == weights;
  for (const char* f : integer_fields) valid = valid && j.contains(f) && j[f].is_number_integer();
  if (!valid)
    throw InputError(
        fmt::format("{}: expected {}'s record of iteration {} with {} weights", json_path.string(), key, iteration, weights));
  const std::string bytes = read_text_file(bin_path.string());
  if (bytes.size() != weights * sizeof(float))
    throw InputError(fmt::format("{}: {} bytes, expected {}", bin_path.string(), bytes.size(), weights * sizeof(float)));
  OverlapRecord r{.iteration = iteration, .fields = std::move(j), .weights = std::vector<float>(weights)};
  std::memcpy(r.weights.data(), bytes.data(), bytes.size());
  return r;
}

}  // namespace cfr
