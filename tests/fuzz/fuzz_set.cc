// Fuzz target: cfr-run's `--set section.key=value` overrides. The input is split at NUL bytes
// (the one byte a command-line argument cannot hold) into up to 16 assignments, applied in order
// to the default config, which is then validated and printed back, as cfr-run does.
#include <algorithm>
#include <string>

#include "apps/run/config.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cfr::fuzz::accept_or_clear_error([&] {
    const std::string_view text = cfr::fuzz::as_text(data, size);
    cfr::Config c;
    std::size_t start = 0;
    for (int n = 0; n < 16 && start <= text.size(); ++n) {
      const std::size_t end = std::min(text.find('\0', start), text.size());
      cfr::apply_override(c, std::string(text.substr(start, end - start)));
      start = end + 1;
    }
    cfr::validate(c);
    (void)cfr::to_toml(c);
  });
}
