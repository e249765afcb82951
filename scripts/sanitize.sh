#!/usr/bin/env bash
# The engine, scheduler and app tests under sanitizers (LibTorch off: its prebuilt library is
# not instrumented). Fails on any report: ASan aborts, UBSan is built with
# -fno-sanitize-recover, TSan exits 66 when it reported anything.
#   scripts/sanitize.sh            # both
#   scripts/sanitize.sh address    # address+undefined only (build-asan/)
#   scripts/sanitize.sh thread     # thread only (build-tsan/): the scheduler tests, cfr-serve's (label threads) and its room's (serve.room.*)
# Labels left out here (convergence, one_thread) are run by scripts/test.sh (tests/README.md).
# The address build is -O1 (ASan's and OSS-Fuzz's level), NDEBUG as in Release: it compiles in
# 57% of -O3's CPU time and its tests take no longer (docs/ci.md). The thread build stays -O3:
# its tests are most of its time and ran longer at -O1 here (not measured on a quiet machine).
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
scripts/setup.sh --deps
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g1 -DCFR_WITH_TORCH=OFF -DCFR_BUILD_BENCH=OFF)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1
export TSAN_OPTIONS=second_deadlock_stack=1
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      # Everything the default suite runs without LibTorch (every target of this configuration is a
      # test's) but the Leduc convergence curves (label convergence: scripts/test.sh runs them, and
      # their code runs here in the short cases; tests/README.md).
      cmake -S . -B build-asan "${common[@]}" -DCFR_SANITIZE=address "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
      cmake --build build-asan
      ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE 'slow|convergence' ;;
    thread)
      # Only what the sched and threads labels run (the scheduler tests, cfr-serve and its pages),
      # less the cases that start no thread (label one_thread: the other stages run them).
      cmake -S . -B build-tsan "${common[@]}" -DCFR_SANITIZE=thread "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG"
      cmake --build build-tsan --target sched_tests cfr-serve cfr_serve_www serve_tests
      ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" -L 'sched|threads' -LE 'slow|one_thread'
      # cfr-serve's game room (its worker pools, the opponents' hooks outside a game's lock): label
      # serve, which holds tests this build has no target for, so by name.
      ctest --test-dir build-tsan --output-on-failure --no-tests=error -j "$(nproc)" -R '^serve\.room\.' ;;
    *) echo "sanitize.sh: unknown sanitizer '$kind' (valid: address, thread)" >&2; exit 2 ;;
  esac
done
