#pragma once
// What every app shares around its command line: one exit-code contract (apps/README.md) and
// CLI11's parse errors reported as bad input.
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/errors.h"

namespace cfr {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;  // the message names what is wrong and where
inline constexpr int kExitInternal = 3;  // a bug: please report it

/// Largest count a flag such as --games accepts (a bound CLI11 can print readably).
inline constexpr int kMaxCount = 100'000'000;

/// Parses the command line. Returns the exit code when the app should stop here: --help prints
/// the help (kExitOk); a parse error prints "<app>: error: <what>" and a hint (kExitBadInput).
inline std::optional<int> parse_command_line(CLI::App& app, std::string_view name, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << fmt::format("{}: error: {}\n{}: see {} --help\n", name, e.what(), name, name);
    return kExitBadInput;
  }
}

/// Runs an app's body and maps what escapes it to the exit codes: bad input (InputError, and a
/// filesystem error: a path the user named is missing, a file, not writable) is 2, anything else
/// 3.
template <class Body>
int run_app(std::string_view name, Body&& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << fmt::format("{}: error: {}\n", name, e.what());
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << fmt::format("{}: error: {}: {}\n", name, e.path1().string(), e.code().message());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("{}: internal error: {}\n", name, e.what());
    return kExitInternal;
  }
}

}  // namespace cfr
