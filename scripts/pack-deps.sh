#!/usr/bin/env bash
# Packs the header-only dependencies (fmt, nlohmann-json, toml++, CLI11, doctest, xxHash, zlib's
# headers, and of Boost the headers that the project's Asio includes reach) from this machine's Debian packages into .deps/ (ignored by git, a few MiB), so that
# a machine without apt (the GPU machine) can build: it travels with the working tree.
#   scripts/pack-deps.sh [DIR]
# DIR is read from the current directory (default: the checkout's .deps). It is replaced whole, so
# a DIR that exists and is not an earlier pack (no include/CLI/CLI.hpp) is refused.
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
dir=$(abspath "${1:-}")
cd "$(dirname "$0")/.."
dir=${dir:-.deps}
if [ -e "$dir" ] && [ ! -f "$dir/include/CLI/CLI.hpp" ]; then
  echo "pack-deps.sh: $dir exists and is not an earlier pack (no include/CLI/CLI.hpp); choose another DIR" >&2
  exit 2
fi
scripts/setup.sh --deps > /dev/null
rm -rf "$dir"
mkdir -p "$dir/include" "$dir/cmake"
for d in fmt nlohmann toml++ CLI doctest; do cp -r "/usr/include/$d" "$dir/include/"; done
cp /usr/include/zlib.h /usr/include/zconf.h /usr/include/xxhash.h "$dir/include/"
# Boost is 180 MB of headers: copy only those the preprocessor reaches from the Boost headers that
# the sources include (about 530 files, 5 MB).
boost_includes=$(grep -rhoE '#include <boost/[^>]+>' sched apps nets engine tests bench 2>/dev/null | sort -u)
printf '%s\n' "$boost_includes" > "$dir/boost_probe.cc"
g++ -std=c++20 -M -MT x "$dir/boost_probe.cc" | tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u |
  while read -r h; do mkdir -p "$dir/include/$(dirname "${h#/usr/include/}")"; cp "$h" "$dir/include/${h#/usr/include/}"; done
rm "$dir/boost_probe.cc"
cp /usr/lib/cmake/doctest/doctest.cmake /usr/lib/cmake/doctest/doctestAddTests.cmake "$dir/cmake/"
echo "pack-deps: $(du -sh "$dir" | cut -f1) in $dir"
