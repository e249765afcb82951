// Every test executable's main: doctest's, after OpenBLAS's kernels are chosen for this CPU
// (engine/core/resources.h: a process with OpenBLAS's generic fallback re-executes itself once).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "engine/core/resources.h"

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);
  return doctest::Context(argc, argv).run();
}
