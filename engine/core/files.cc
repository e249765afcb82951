#include "engine/core/files.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

namespace {

std::string prefix(std::string_view what, const std::string& path) {
  return what.empty() ? path : fmt::format("{} {}", what, path);
}

/// The file type of `path` (following links), or throws InputError when it cannot be examined.
mode_t file_type(const std::string& path, std::string_view what) {
  if (path.empty()) throw InputError(fmt::format("{}: empty path", what.empty() ? "file" : what));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(
        fmt::format("{}: {}", prefix(what, path), errno == ENOENT ? "no such file or directory" : std::strerror(errno)));
  return st.st_mode & S_IFMT;
}

}  // namespace

void require_readable_file(const std::string& path, std::string_view what) {
  const mode_t type = file_type(path, what);
  if (type == S_IFDIR) throw InputError(fmt::format("{}: is a directory, not a file", prefix(what, path)));
  if (type != S_IFREG) throw InputError(fmt::format("{}: not a regular file", prefix(what, path)));
  if (::access(path.c_str(), R_OK) != 0)
    throw InputError(fmt::format("{}: cannot read ({})", prefix(what, path), std::strerror(errno)));
}

void require_directory(const std::string& path, std::string_view what) {
  if (file_type(path, what) != S_IFDIR) throw InputError(fmt::format("{}: not a directory", prefix(what, path)));
}

void require_output_file(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) throw InputError(fmt::format("{}: is a directory", prefix(what, path)));
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::is_directory(dir)) throw InputError(fmt::format("{}: no folder {}", prefix(what, path), dir.string()));
}

namespace {

/// Writes `bytes` to the open file `fd` and closes it (with `sync`, fsync(2) first); throws
/// InputError "<path>: cannot write: <strerror>".
void write_and_close(int fd, const std::string& path, std::string_view bytes, bool sync) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;  // a write of 0 bytes: the device took nothing
      ::close(fd);
      throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(e)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (sync && ::fsync(fd) != 0) {  // a filesystem may report a full disk only here
    const int e = errno;
    ::close(fd);
    throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(e)));
  }
  if (::close(fd) != 0)  // ... or here
    throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

}  // namespace

void write_file(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  write_and_close(fd, path, bytes, false);
}

void write_file_atomic(const std::string& path, std::string_view text) {
  // A name of its own beside `path` (`path`.tmp-XXXXXX), created exclusively as mkstemp does, but
  // with a plain file's mode (0644 less the umask; mkstemp's is 0600): a file already there,
  // e.g. the user's `path`.tmp, is never opened, truncated or removed.
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device entropy;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    std::uint64_t bits = (std::uint64_t{entropy()} << 32) | entropy();
    tmp = path + ".tmp-";
    for (int i = 0; i < 6; ++i, bits /= 62) tmp += kChars[bits % 62];
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt == 100))
      throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  }
  try {
    write_and_close(fd, path, text, true);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw InputError(fmt::format("{}: cannot rename to {} ({})", tmp, path, why));
  }
}

}  // namespace cfr
