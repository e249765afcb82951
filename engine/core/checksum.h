#pragma once
// Content checksums (XXH3, 128 bits, from Debian's libxxhash-dev used header-only): what a
// checkpoint records of each of its files so that loading can prove they are the bytes written.
#include <cstdint>
#include <string>
#include <string_view>

namespace cfr {

/// XXH3-128 of `bytes` as 32 lowercase hex digits.
std::string checksum_of(std::string_view bytes);

/// XXH3-64 of `bytes`: a key for in-memory lookups (e.g. an information state's encoding).
std::uint64_t hash64(std::string_view bytes) noexcept;

struct FileChecksum {
  std::int64_t bytes = 0;
  std::string digest;  // checksum_of the file's content
};
/// The size and checksum of a file, read in blocks; InputError naming it when it cannot be read.
FileChecksum file_checksum(const std::string& path);

}  // namespace cfr
