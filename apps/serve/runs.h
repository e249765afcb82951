#pragma once
// cfr-serve's view of training runs: the run directories under each --runs folder (a folder with a
// metrics.jsonl or a config.toml, or the folder itself), their state and best evaluation, and their
// metrics read as they grow (only complete lines: a torn last line, a run mid-write, is waited out).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cfr::serve {

/// Reads the complete lines appended to a metrics.jsonl since the last call. A line that is not
/// JSON is skipped (and counted); a last line without its newline is left for the next call.
class MetricsTail {
 public:
  explicit MetricsTail(std::filesystem::path path) : path_(std::move(path)) {}
  std::vector<nlohmann::json> read_new();
  long bad_lines() const { return bad_; }

 private:
  std::filesystem::path path_;
  std::uintmax_t offset_ = 0;
  long bad_ = 0;
};

class RunIndex {
 public:
  /// Each root must be a directory (InputError otherwise).
  explicit RunIndex(std::vector<std::string> roots);

  /// Every run: {name, game, algorithm, iteration, max_iterations, state, best, updated}, newest first.
  nlohmann::json list() const;
  /// A run by name: {name, game, state, eta_seconds, config (its config.toml's text), metrics
  /// [every complete line], ladder (a ladder.json beside it, if any)}. nullopt: no such run.
  std::optional<nlohmann::json> detail(const std::string& name) const;
  /// The run directory of a name (names are directory names; the first root wins a clash).
  std::optional<std::filesystem::path> find(const std::string& name) const;
  /// Lost Cities runs with a checkpoint, by name, for the play page.
  std::vector<std::pair<std::string, std::filesystem::path>> playable() const;
  /// {state, eta_seconds} of a run from its files (running: metrics written in the last 30 s).
  static nlohmann::json status(const std::filesystem::path& run, const std::vector<nlohmann::json>& metrics);

 private:
  std::vector<std::filesystem::path> runs() const;
  std::vector<std::filesystem::path> roots_;
};

}  // namespace cfr::serve
