#!/usr/bin/env bash
# Installs every Debian package the project needs, checks the BLAS selection, then configures
# and builds the project. Idempotent: re-running it only does what is missing.
#
#   scripts/setup.sh            # install packages + configure + build (build/)
#   scripts/setup.sh --deps     # install packages only
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure arguments, e.g.
# "-DCFR_SANITIZE=address"), BUILD_TARGETS (build only these targets; default all).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev            # Boost.Asio (header-only): pooled's hand-offs, signals; 1.81 for channels
  libfmt-dev libtomlplusplus-dev doctest-dev libcli11-dev nlohmann-json3-dev
  libbenchmark-dev zlib1g-dev
  libxxhash-dev               # checkpoint checksums (xxhash.h, used header-only)
  libopenblas0-pthread        # LibTorch only recommends it; the reference BLAS is 35x slower
  libtorch-dev                # LibTorch 1.13 (CPU), only for nets/
  gnuplot-nox                 # cfr-plot
  clang libclang-rt-14-dev    # libFuzzer targets (scripts/fuzz.sh)
  clang-format-14             # scripts/check-format.sh (CI)
  libopenmpi-dev openmpi-bin  # distributed runs: mpirun -np N cfr-run
  libjs-chart.js              # cfr-serve's charts, served locally
  chromium chromium-driver python3-selenium fonts-liberation  # cfr-serve's browser tests (headless)
  pybind11-dev python3-dev python3-numpy python3-pytest       # the cfr Python module and its tests (docs/python.md)
  python3-torch               # Python-side networks in the module's tests and benchmarks (cfr.traverse, bench/)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# OpenBLAS must be the active libblas.so.3 (alternatives may still point at the reference BLAS).
blas_alt=$(update-alternatives --list libblas.so.3-x86_64-linux-gnu 2>/dev/null | grep openblas-pthread | head -n1 || true)
if [ -n "$blas_alt" ]; then
  current=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || true)
  if [ "$current" != "$(readlink -f "$blas_alt")" ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO update-alternatives --set libblas.so.3-x86_64-linux-gnu "$blas_alt"
  fi
  echo "setup: libblas.so.3 -> $(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu)"
else
  echo "setup: error: OpenBLAS (pthread) is not registered as libblas.so.3; install libopenblas0-pthread" >&2
  exit 1
fi

[ "${1:-}" = "--deps" ] && exit 0

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
# shellcheck disable=SC2086
cmake --build "$build_dir" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
