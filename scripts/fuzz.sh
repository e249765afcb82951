#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for a fixed time from its
# seed corpus in tests/fuzz/corpus (copied: the new inputs stay in build-fuzz/corpus). Any
# crash, sanitizer report, escaped non-InputError exception, hang (> 10 s) or memory blow-up
# (> 2 GiB) fails; the reproducer is left in build-fuzz/findings/. As many targets run at once as
# there are cores.
#   scripts/fuzz.sh                  # every target, 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh config
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config replay policy checkpoint set rules serve_api)
scripts/setup.sh --deps
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DCFR_FUZZ=ON \
  -DCFR_WITH_TORCH=OFF -DCFR_BUILD_TESTS=OFF -DCFR_BUILD_BENCH=OFF
cmake --build build-fuzz --target $(printf 'fuzz_%s ' "${targets[@]}")
mkdir -p build-fuzz/findings
# One target per core at a time (each libFuzzer run is single-threaded).
fuzz_one() {
  local t=$1 corpus=build-fuzz/corpus/$1 status=0
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/
  build-fuzz/bin/fuzz_"$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/findings/"$t"- -print_final_stats=1 > build-fuzz/fuzz_"$t".log 2>&1 || status=$?
  echo "$status" > build-fuzz/fuzz_"$t".status
}
jobs_max=$(nproc)
for t in "${targets[@]}"; do
  echo "fuzz: $t for ${seconds}s"
  fuzz_one "$t" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
done
wait
failed=0
for t in "${targets[@]}"; do
  status=$(cat build-fuzz/fuzz_"$t".status 2>/dev/null || echo missing)
  echo "fuzz: $t"
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY)' build-fuzz/fuzz_"$t".log || true
  if [ "$status" != 0 ] || compgen -G "build-fuzz/findings/$t-*" > /dev/null; then
    tail -n 40 build-fuzz/fuzz_"$t".log >&2
    echo "fuzz: $t FAILED (exit $status); reproduce with build-fuzz/bin/fuzz_$t build-fuzz/findings/$t-*" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
echo "fuzz: no findings"
