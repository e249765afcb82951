#pragma once
// Reading input files and writing output files: an input that is not a readable regular file is
// refused by name (a directory reads as an empty file otherwise), and a failed write never leaves
// a half-written file behind.
#include <string>
#include <string_view>

namespace cfr {

/// Throws InputError "<what> <path>: <why>" unless `path` is an existing, readable regular file
/// (a directory, a device or a missing path is refused). `what` names the argument, e.g.
/// "config"; empty: the message starts with the path.
void require_readable_file(const std::string& path, std::string_view what = {});
/// The same for a directory that must exist (e.g. a run directory given to --resume).
void require_directory(const std::string& path, std::string_view what = {});

/// Checks an output file before the work that produces it (a round robin, a benchmark, a solve):
/// throws InputError "<what> <path>: is a directory" or "<what> <path>: no folder <folder>" unless
/// `path` names a file that can be created or replaced in an existing folder.
void require_output_file(const std::string& path, std::string_view what);

/// Writes `bytes` to `path` (created or truncated) with write(2), and closes it. Throws InputError
/// "<path>: cannot write: <strerror>" (e.g. "No space left on device") when the file cannot be
/// opened, written whole or closed; what was written of it is left for the caller to remove.
void write_file(const std::string& path, std::string_view bytes);

/// Writes `text` to `path` atomically: into a new file of its own beside it (`path`.tmp-XXXXXX,
/// created exclusively: no existing file, such as a user's `path`.tmp, is touched), written to
/// disk with fsync(2), then renamed over `path` (the folder itself is not synced). A file already
/// at `path` stays whole until the rename. Throws InputError naming the file that could not be
/// written or renamed and why (strerror: a full disk says "No space left on device"); the
/// temporary file is removed then.
void write_file_atomic(const std::string& path, std::string_view text);

}  // namespace cfr
