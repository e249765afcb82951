#pragma once
// What every app shares around its command line: one exit-code contract (apps/README.md) and
// CLI11's parse errors reported as bad input.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/core/errors.h"
#include "engine/games/external_player.h"

namespace cfr {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;     // the message names what is wrong and where
inline constexpr int kExitInternal = 3;     // a bug: please report it
inline constexpr int kExitPlayerFault = 5;  // --stop-on-fault: an external player's fault stopped a match

/// Largest count a flag such as --games accepts (a bound CLI11 can print readably).
inline constexpr int kMaxCount = 100'000'000;

/// Refuses an empty value ("--out ''" would otherwise read as "not given").
inline const CLI::Validator kNonEmpty([](std::string& s) { return s.empty() ? std::string("empty value") : std::string(); },
                                      "NONEMPTY");
/// An integer written in decimal: CLI11 reads "010" as octal 8 and "0x10" as 16; leading zeros
/// are dropped so that "010" is 10. Goes before a range check.
inline const CLI::Validator kDecimal(
    [](std::string& s) {
      std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
      if (i == s.size() || s.find_first_not_of("0123456789", i) != std::string::npos)
        return "Value " + s + " is not a decimal integer";
      const std::size_t digits = s.find_first_not_of('0', i);
      s.erase(i, (digits == std::string::npos ? s.size() - 1 : digits) - i);
      return std::string();
    },
    "DECIMAL");
/// A seed: a decimal integer in [0, 2^63 − 1] (CLI11 would wrap −1 to 2^64 − 1 silently).
inline const CLI::Range kSeedRange(std::uint64_t{0}, std::uint64_t{INT64_MAX});
/// A count such as --games: a decimal integer in [1, kMaxCount].
inline const CLI::Range kCountRange(1, kMaxCount);

/// A finite number in [lo, hi] ((lo, hi] with `lo_open`), for every floating-point option: CLI11's
/// Range lets "nan" through (every comparison with NaN is false) and takes "inf" or "1e400" as
/// infinite, which casts to nonsense (2^63 bytes, INT64_MIN nanoseconds). The bounds print as
/// written ("0.01", not std::to_string's "0.010000").
inline CLI::Validator finite_range(double lo, double hi, bool lo_open = false) {
  const std::string bounds = fmt::format("{}{}, {}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& s) {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v)) return fmt::format("Value {} is not a finite number", s);
        if (v < lo || (lo_open && v == lo) || v > hi) return fmt::format("Value {} not in {}", s, bounds);
        return std::string();
      },
      "FINITE in " + bounds);
}

/// The options of the tools that run matches for external:COMMAND players (docs/external-players.md).
struct MatchPlayerFlags {
  lc::ExternalOptions external;
  bool stop_on_fault = false;
};
inline void add_external_player_options(CLI::App& app, MatchPlayerFlags& f) {
  app.add_option("--move-timeout", f.external.move_timeout_s,
                 "external players: seconds within which a round of answers is due, else those games are forfeited")
      ->check(finite_range(0.0, lc::kMaxExternalTimeoutS, /*lo_open=*/true));
  app.add_option("--start-timeout", f.external.start_timeout_s, "external players: seconds to answer the hello")
      ->check(finite_range(0.0, lc::kMaxExternalTimeoutS, /*lo_open=*/true));
  app.add_option_function<double>(
         "--player-log-mib", [&f](double mib) { f.external.max_log_bytes = static_cast<std::uint64_t>(mib * (1 << 20)); },
         "external players: the most a player may write to a file, its stderr log included, in MiB (then it is "
         "stopped and its games forfeited; default 64)")
      ->check(finite_range(0.01, 1048576.0));
  app.add_option("--player-logs", f.external.log_dir,
                 "external players: directory of their stderr logs (default: cfr-ladder: the folder of --json or "
                 "--svg; otherwise a new $TMPDIR/cfr-player-logs-XXXXXX, named on stderr; never the current directory)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--stop-on-fault", f.stop_on_fault,
               "stop at the first forfeit of an external player (exit 5) instead of going on with the match");
}

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
