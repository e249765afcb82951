#pragma once
// cfr-serve's view of training runs: the run directories under each --runs folder (a folder with a
// metrics.jsonl or a config.toml, or the folder itself), their state and best evaluation, and their
// metrics read as they grow (only complete lines: a torn last line, a run mid-write, is waited out).
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cfr::serve {

/// Reads the complete lines appended to a metrics.jsonl since the last call, at most about
/// `max_bytes` of them a call (caught_up() says whether more remain). A line that is not JSON, or
/// longer than kMaxLine, is skipped (and counted); a last line without its newline is left for the
/// next call. A file shorter than what was read (rewritten, e.g. a resume trimmed it) starts over.
class MetricsTail {
 public:
  static constexpr std::size_t kMaxLine = 1 << 20;
  explicit MetricsTail(std::filesystem::path path) : path_(std::move(path)) {}
  std::vector<nlohmann::json> read_new(std::size_t max_bytes = 4 << 20);
  bool caught_up() const { return caught_up_; }
  /// Times the file was found shorter than what was read, so read again from its start.
  long restarts() const { return restarts_; }
  long bad_lines() const { return bad_; }

 private:
  std::filesystem::path path_;
  std::uintmax_t offset_ = 0;
  long bad_ = 0, restarts_ = 0;
  bool caught_up_ = true, skipping_ = false;
};

/// A run's metrics.jsonl as far as it has been read, read on from there at each look: what its
/// status and best evaluation need (counts and sums), the curve its page draws (each line reduced
/// to the page's fields, thinned to at most 2 * kCurvePoints points plus as many evaluations), and
/// its last kRecentLines points for the live feeds. Memory and the work of a look are bounded
/// however long the run (a 2-hour Lost Cities run writes 150 MB of metrics).
class RunMetrics {
 public:
  static constexpr std::size_t kCurvePoints = 1000, kRecentLines = 2048;
  explicit RunMetrics(std::filesystem::path path) : tail_(std::move(path)) {}
  /// Reads what was appended since the last call (all of it).
  void read_on();
  long lines() const { return lines_; }  // complete JSON lines read
  long iteration() const { return iteration_; }
  double mean_iteration_seconds() const { return lines_ > 0 ? iteration_seconds_ / static_cast<double>(lines_) : 0.0; }
  const nlohmann::json& best() const { return best_; }
  /// The thinned curve, in line order, the last line's point included.
  nlohmann::json curve() const;
  /// The points of lines `from` (0-based line number) on, as far as kRecentLines back; `next` is
  /// the line number after the last one returned.
  nlohmann::json since(long from, long& next) const;

 private:
  // Every stride-th point of a stream, the stride doubling whenever 2 * cap are kept.
  struct Thinned {
    long stride = 1, seen = 0;
    std::vector<std::pair<long, std::string>> kept;  // points as JSON text: a few hundred bytes each
    void add(long line, const std::string& point);
  };
  void add(const nlohmann::json& line);
  void clear();  // all but the tail: the file was rewritten
  MetricsTail tail_;
  long lines_ = 0, iteration_ = 0;
  double iteration_seconds_ = 0;
  nlohmann::json best_ = nlohmann::json::object();
  Thinned curve_, evaluations_;
  std::deque<std::pair<long, std::string>> recent_;  // the last points, with their line numbers
};

/// What the run page draws of one metrics line: its iteration, losses, exploitability, win rates,
/// speed and phase times; nothing else (a Lost Cities line's league table is most of its bytes).
nlohmann::json point_of(const nlohmann::json& line);

class RunIndex {
 public:
  /// Each root must be a directory (InputError otherwise).
  explicit RunIndex(std::vector<std::string> roots);

  /// Every run: {name, game, algorithm, iteration, max_iterations, state, best, updated}, newest first.
  nlohmann::json list() const;
  /// A run by name: {name, game, state, eta_seconds, config (its config.toml's text), lines (the
  /// complete metrics lines), metrics (their points, thinned: RunMetrics::curve), ladder (a
  /// ladder.json beside it, if any)}. nullopt: no such run.
  std::optional<nlohmann::json> detail(const std::string& name) const;
  /// A run's metrics, read on to the end of its file (kept between calls).
  const RunMetrics& metrics(const std::filesystem::path& run) const;
  /// The run directory of a name (names are directory names; the first root wins a clash).
  std::optional<std::filesystem::path> find(const std::string& name) const;
  /// Lost Cities runs with a checkpoint, by name, for the play page.
  std::vector<std::pair<std::string, std::filesystem::path>> playable() const;
  /// {state, iteration, max_iterations, eta_seconds} of a run from its files and metrics (running:
  /// metrics written in the last 30 s).
  static nlohmann::json status(const std::filesystem::path& run, const RunMetrics& metrics);

 private:
  std::vector<std::filesystem::path> runs() const;
  std::vector<std::filesystem::path> roots_;
  // The I/O thread only: each run's metrics read so far (one entry per run directory listed).
  mutable std::map<std::filesystem::path, RunMetrics> metrics_;
};

}  // namespace cfr::serve
