#include "apps/run/snapshots.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "engine/core/checksum.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"

namespace cfr {

namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'C', 'F', 'R', 'S', 'N', 'A', 'P', '1'};
constexpr std::size_t kHeader = 8 + 8 + 8, kDigest = 32;
}  // namespace

std::string snapshot_path(const std::string& run_dir, int iteration) {
  return (fs::path(run_dir) / "snapshots" / fmt::format("iter-{:06d}.bin", iteration)).string();
}

void write_snapshot(const std::string& run_dir, int iteration, std::span<const float> weights) {
  fs::create_directories(fs::path(run_dir) / "snapshots");
  std::string bytes(kHeader + weights.size_bytes(), '\0');
  const std::int64_t it = iteration, n = static_cast<std::int64_t>(weights.size());
  std::memcpy(bytes.data(), kMagic, 8);
  std::memcpy(bytes.data() + 8, &it, 8);
  std::memcpy(bytes.data() + 16, &n, 8);
  std::memcpy(bytes.data() + kHeader, weights.data(), weights.size_bytes());
  bytes += checksum_of(bytes);
  write_file_atomic(snapshot_path(run_dir, iteration), bytes);
}

std::vector<float> read_snapshot(const std::string& path, std::int64_t expected) {
  const std::string bytes = read_text_file(path);
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw InputError(fmt::format("{}: not an advantage snapshot (no CFRSNAP1 header)", path));
  std::int64_t n = -1;
  if (bytes.size() >= kHeader) std::memcpy(&n, bytes.data() + 16, 8);
  if (n < 0 || n > static_cast<std::int64_t>(bytes.size()) ||
      bytes.size() != kHeader + static_cast<std::size_t>(n) * sizeof(float) + kDigest)
    throw InputError(
        n < 0 ? fmt::format("{}: {} bytes, shorter than its header (truncated or changed)", path, bytes.size())
              : fmt::format("{}: {} bytes, its header promises {} floats (truncated or changed)", path, bytes.size(), n));
  const std::string_view body(bytes.data(), bytes.size() - kDigest);
  if (checksum_of(body) != bytes.substr(body.size()))
    throw InputError(fmt::format("{}: checksum mismatch (the file changed since it was written)", path));
  if (expected >= 0 && n != expected)
    throw InputError(fmt::format("{}: {} weights, the run's advantage networks have {}", path, n, expected));
  std::vector<float> w(static_cast<std::size_t>(n));
  std::memcpy(w.data(), bytes.data() + kHeader, w.size() * sizeof(float));
  return w;
}

std::vector<std::pair<int, std::string>> list_snapshots(const std::string& run_dir) {
  std::vector<std::pair<int, std::string>> out;
  const fs::path dir = fs::path(run_dir) / "snapshots";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    int it = 0;
    if (name.size() == 15 && name.rfind("iter-", 0) == 0 && name.ends_with(".bin") &&
        std::all_of(name.begin() + 5, name.begin() + 11, [](char c) { return c >= '0' && c <= '9'; })) {
      it = std::stoi(name.substr(5, 6));
      out.emplace_back(it, e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void trim_snapshots(const std::string& run_dir, int last) {
  for (const auto& [it, path] : list_snapshots(run_dir))
    if (it > last) fs::remove(path);
}

void require_snapshots(const std::string& dir, int every, int last, const std::string& run_dir, std::string_view what,
                       std::string_view consequence) {
  std::vector<int> have;
  for (const auto& [it, path] : list_snapshots(dir)) have.push_back(it);
  for (int k = every; k <= last; k += every)
    if (!std::binary_search(have.begin(), have.end(), k))
      throw InputError(fmt::format("--resume {}: the {} of iteration {} ({}) is missing; the resumed run would {}", run_dir, what,
                                   k, snapshot_path(dir, k), consequence));
}

}  // namespace cfr
