#!/usr/bin/env bash
# The whole default test suite: installs what is missing, builds, runs every test not labelled
# slow. Extra arguments go to ctest (e.g. -R golden, or -L slow for the long runs).
#   scripts/test.sh
#   BUILD_DIR=build-asan CMAKE_ARGS=-DCFR_SANITIZE=address scripts/test.sh   # under sanitizers
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build_dir=${BUILD_DIR:-build}
if [ $# -eq 0 ]; then set -- -LE slow; fi
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
