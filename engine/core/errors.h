#pragma once
// Typed exceptions for user input and API misuse, and the always-on boundary check macro.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace cfr {

/// Bad user input: rules, configs, files, command-line arguments. The message names what is
/// wrong and where.
class InputError;
/// The whole content of a text file; InputError naming the path when it is not a readable regular
/// file (engine/core/files.h) or cannot be read.
std::string read_text_file(const std::string& path);

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Non-finite values (NaN, infinity) that the configured policy says stop a run.
class NumericError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An action that is not legal in the state it was applied to.
class IllegalActionError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// A violated precondition or invariant at an API boundary (a bug in the caller).
class CheckError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// "a, b, c": the valid choices in an error message.
inline std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

[[noreturn]] void check_failed(const char* file, int line, const char* expr, const std::string& msg);

}  // namespace cfr

/// Always-on check for API boundaries: throws cfr::CheckError with file:line, the expression and
/// a formatted message of the offending values.
#define CFR_CHECK(cond, ...)                                                      \
  do {                                                                            \
    if (!(cond)) [[unlikely]]                                                     \
      ::cfr::check_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
  } while (0)

/// Debug-only check for hot paths (compiled out with NDEBUG).
#ifdef NDEBUG
#define CFR_DCHECK(cond, ...) \
  do {                        \
  } while (0)
#else
#define CFR_DCHECK(cond, ...) CFR_CHECK(cond, __VA_ARGS__)
#endif
