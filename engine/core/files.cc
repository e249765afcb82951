#include "engine/core/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

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
    throw InputError(fmt::format("{}: {}", prefix(what, path), errno == ENOENT ? "no such file or directory" : std::strerror(errno)));
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

void write_file_atomic(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw InputError(fmt::format("{}: write failed", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw InputError(fmt::format("{}: cannot rename to {} ({})", tmp, path, why));
  }
}

}  // namespace cfr
