#!/usr/bin/env bash
# Every tracked C++ file (.h, .cc) formatted as .clang-format says (clang-format 14, Debian's
# clang-format package). Lists the files that differ and exits 1; --fix rewrites them in place.
#   scripts/check-format.sh          # check (CI)
#   scripts/check-format.sh --fix    # format the tree
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "check-format.sh: clang-format not found (install Debian's clang-format: scripts/setup.sh does)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.h' '*.cc')
if [ "${1:-}" = "--fix" ]; then
  "$cf" -i --style=file "${files[@]}"
  exit 0
fi
[ $# -eq 0 ] || { echo "check-format.sh: unknown argument '$1' (valid: --fix)" >&2; exit 2; }
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (scripts/check-format.sh --fix)"
    bad=$((bad + 1))
  fi
done
echo "check-format: ${#files[@]} files, $bad not formatted"
[ "$bad" -eq 0 ]
