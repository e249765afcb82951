#include "engine/core/checksum.h"

#include <cstdio>
#include <memory>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/files.h"

namespace cfr {

namespace {

std::string hex(const XXH128_hash_t& h) { return fmt::format("{:016x}{:016x}", h.high64, h.low64); }

}  // namespace

std::string checksum_of(std::string_view bytes) { return hex(XXH3_128bits(bytes.data(), bytes.size())); }

std::uint64_t hash64(std::string_view bytes) noexcept { return XXH3_64bits(bytes.data(), bytes.size()); }

FileChecksum file_checksum(const std::string& path) {
  require_readable_file(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw InputError(fmt::format("{}: cannot open file", path));
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> st(XXH3_createState(), XXH3_freeState);
  if (!st || XXH3_128bits_reset(st.get()) != XXH_OK) throw std::bad_alloc();
  std::vector<char> buf(std::size_t{1} << 20);
  FileChecksum out;
  for (;;) {
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
    if (n > 0) XXH3_128bits_update(st.get(), buf.data(), n);
    out.bytes += static_cast<std::int64_t>(n);
    if (n < buf.size()) break;
  }
  if (std::ferror(f.get())) throw InputError(fmt::format("{}: read error", path));
  out.digest = hex(XXH3_128bits_digest(st.get()));
  return out;
}

}  // namespace cfr
