#!/usr/bin/env bash
# Builds against the LibTorch bundled in PyTorch's Python package (the GPU machine: PyTorch 2.x
# with CUDA, CMake and ninja, no apt, no internet), with the header-only dependencies that
# scripts/pack-deps.sh packed into .deps/ on a machine with the Debian packages.
#   scripts/build-gpu.sh [BUILD_DIR] [TARGET]...   # default build-gpu, every target
#   env PYTHON (default python3), CMAKE_ARGS (more -D options)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-gpu}
shift || true
python=${PYTHON:-python3}
[ -f .deps/include/fmt/format.h ] || { echo "build-gpu: .deps/ is missing: run scripts/pack-deps.sh where apt works, and carry .deps" >&2; exit 2; }
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCFR_DEPS_DIR="$PWD/.deps" -DCFR_TORCH_PYTHON="$python" \
  -DCFR_BUILD_BENCH=OFF ${CMAKE_ARGS:-}
if [ $# -gt 0 ]; then cmake --build "$build_dir" --target "$@"; else cmake --build "$build_dir"; fi
