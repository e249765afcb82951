#!/usr/bin/env bash
# Packs the header-only dependencies (fmt, nlohmann-json, toml++, CLI11, doctest, xxHash, zlib's
# headers) from this machine's Debian packages into .deps/ (ignored by git, a few MiB), so that
# a machine without apt (the GPU machine) can build: it travels with the working tree.
#   scripts/pack-deps.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.deps}
scripts/setup.sh --deps > /dev/null
rm -rf "$dir"
mkdir -p "$dir/include" "$dir/cmake"
for d in fmt nlohmann toml++ CLI doctest; do cp -r "/usr/include/$d" "$dir/include/"; done
cp /usr/include/zlib.h /usr/include/zconf.h /usr/include/xxhash.h "$dir/include/"
cp /usr/lib/cmake/doctest/doctest.cmake /usr/lib/cmake/doctest/doctestAddTests.cmake "$dir/cmake/"
echo "pack-deps: $(du -sh "$dir" | cut -f1) in $dir"
