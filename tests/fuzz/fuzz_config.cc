// Fuzz target: cfr-run's TOML config loader (parse, every field's type and range, validate,
// and printing the result back).
#include "apps/run/config.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cfr::fuzz::accept_or_clear_error([&] {
    cfr::Config c = cfr::parse_config(cfr::fuzz::as_text(data, size), "fuzz.toml");
    cfr::validate(c);
    (void)cfr::to_toml(c);
  });
}
