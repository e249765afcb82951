// OpenBLAS's kernels (engine/core/resources.h): a process that loads LibTorch, started through
// select_blas_kernels (tests/main.cc), does not run the generic Prescott fallback on a CPU with
// AVX-512 or AVX2 unless the user asked for it.
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>
#include <strings.h>

#include "engine/core/resources.h"
#include "nets/networks.h"

TEST_CASE("OpenBLAS runs kernels for this CPU, not its generic fallback") {
  cfr::configure_torch_threads(1);  // LibTorch (and its BLAS) loaded and used
  const std::string core = cfr::blas_core();
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  MESSAGE("OpenBLAS core: ", core.empty() ? "(not OpenBLAS)" : core,
          "; OPENBLAS_CORETYPE=", std::string(user ? user : "(unset)"));
  const bool vector_cpu = __builtin_cpu_supports("avx512f") || __builtin_cpu_supports("avx2");
  if (!core.empty() && vector_cpu && !(user != nullptr && strcasecmp(user, "prescott") == 0))
    CHECK(strcasecmp(core.c_str(), "prescott") != 0);
}
