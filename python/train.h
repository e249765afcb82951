#pragma once
// cfr.train's process (module.cc): a cfr-run of the same build run as a child process, so that a
// run started from Python is a cfr-run run in every respect (the same run directory, metrics,
// checkpoints, signals and --resume), and LibTorch stays out of the Python process. Its
// metrics.jsonl is read as it grows; a SIGINT stops it as Ctrl-C stops cfr-run (it finishes the
// current step and keeps its checkpoint). pybind11-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cfr::py {

/// `cfr-run` beside a module in DIR/python: DIR/bin/cfr-run; $CFR_BIN/cfr-run when CFR_BIN is set.
/// InputError naming where it looked when it is not there.
std::string find_cfr_run(const std::string& module_file);

/// A config given as JSON (a Python dict: sections as tables, [scheduler.NAME] as nested tables)
/// as TOML text (toml++); InputError naming a value TOML cannot hold.
std::string toml_from_json_text(const std::string& json);

class TrainProcess {
 public:
  /// Starts `program args...`; its stderr goes to a private temporary file, its stdout is this
  /// process's. `metrics` is the run's metrics.jsonl (it may not exist yet).
  TrainProcess(const std::string& program, const std::vector<std::string>& args, std::string metrics);
  ~TrainProcess();  // a child still running is interrupted and waited for
  TrainProcess(const TrainProcess&) = delete;
  TrainProcess& operator=(const TrainProcess&) = delete;

  /// Waits up to `seconds` (negative: until it exits); its exit code once it exited (128 + N for
  /// a signal N), else nullopt.
  std::optional<int> wait_for(double seconds);
  /// The complete lines metrics.jsonl gained since the last call (the first call: since the start).
  std::vector<std::string> new_metrics_lines();
  /// SIGINT: cfr-run finishes its current step, keeps its checkpoint and exits 0.
  void interrupt();
  /// What it wrote on stderr (at most the last 64 KiB).
  std::string stderr_text() const;

 private:
  int pid_ = -1;
  std::optional<int> exit_code_;
  std::string metrics_, stderr_path_, partial_;
  std::uint64_t offset_ = 0;
};

}  // namespace cfr::py
