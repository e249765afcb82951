#pragma once
// What every fuzz target asserts: an input is either accepted or refused with an InputError
// (the project's "clear error"); any other exception, a crash, a sanitizer report or a hang
// (libFuzzer's -timeout) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "engine/core/errors.h"

namespace cfr::fuzz {

template <class F>
int accept_or_clear_error(F&& body) {
  try {
    body();
  } catch (const InputError&) {
    // the clean refusal every loader promises
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than InputError escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace cfr::fuzz
