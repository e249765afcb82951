#pragma once
// Writing output files so that a failure never leaves a half-written one behind.
#include <string>
#include <string_view>

namespace cfr {

/// Writes `text` to `path` atomically: into `path`.tmp, flushed, then renamed over `path`. A
/// file already at `path` stays whole until the rename. Throws InputError naming the file that
/// could not be written or renamed (the temporary file is removed then).
void write_file_atomic(const std::string& path, std::string_view text);

}  // namespace cfr
