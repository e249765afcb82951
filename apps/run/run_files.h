#pragma once
// The files of a run directory that a training loop appends to or rewrites: metrics.jsonl (one
// whole JSON line per iteration), parts/part-NNN.toml (each part's resolved config), and the
// names of checkpoint directories.
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

/// "iter-NNNNNN": the checkpoint directory of an iteration.
std::string checkpoint_dir_name(int iteration);

/// metrics.jsonl, appended one whole line per write(2) (O_APPEND): a crash leaves complete lines
/// (a kill inside a multi-page write could still cut the last one; resume drops such a line).
class MetricsFile {
 public:
  explicit MetricsFile(const std::string& path) { open(path); }
  ~MetricsFile() { close(); }
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;
  void open(const std::string& path) {
    close();
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void append(const std::string& line) {
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw InputError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

/// Keeps the metrics lines of iterations ≤ last (and drops a torn last line: no newline, not
/// JSON), atomically. Any other line that is not a JSON object is an InputError naming the file and
/// line, and the file is left as it was.
void trim_metrics(const std::string& path, int last);

/// run_dir/parts/part-NNN.toml: each part of a run (its first start and every resume) keeps the
/// resolved config it ran with, headed by `header` (what it resumed from). Returns the part's number.
int write_part_config(const std::string& run_dir, const std::string& config_toml, const std::string& header);

}  // namespace cfr
