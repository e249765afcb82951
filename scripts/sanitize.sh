#!/usr/bin/env bash
# The engine, scheduler and app tests under sanitizers (LibTorch off: its prebuilt library is
# not instrumented). Fails on any report: ASan aborts, UBSan is built with
# -fno-sanitize-recover, TSan exits 66 when it reported anything.
#   scripts/sanitize.sh            # both
#   scripts/sanitize.sh address    # address+undefined only (build-asan/)
#   scripts/sanitize.sh thread     # thread only (build-tsan/): the scheduler tests and cfr-serve's (label threads)
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
common="-DCFR_WITH_TORCH=OFF -DCFR_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS=-g1"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1
export TSAN_OPTIONS=second_deadlock_stack=1
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      BUILD_DIR=build-asan CMAKE_ARGS="-DCFR_SANITIZE=address $common" scripts/setup.sh
      ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE slow ;;
    thread)
      # Only what the sched and threads labels run (the scheduler tests, cfr-serve and its pages).
      BUILD_DIR=build-tsan CMAKE_ARGS="-DCFR_SANITIZE=thread $common" BUILD_TARGETS="sched_tests cfr-serve cfr_serve_www" \
        scripts/setup.sh
      ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" -L 'sched|threads' -LE slow ;;
    *) echo "sanitize.sh: unknown sanitizer '$kind' (valid: address, thread)" >&2; exit 2 ;;
  esac
done
