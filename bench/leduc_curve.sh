#!/usr/bin/env bash
# Deep CFR on Leduc: the exploitability curve against wall time (issue item: ≤ 0.05 within 20
# minutes on 2 cores). Runs configs/leduc.toml (max_minutes = 20) into a run directory, prints
# iteration, cumulative wall seconds and exploitability for each evaluation, and draws the plots.
#   bench/leduc_curve.sh [RUN_DIR] [--set section.key=value ...]
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${1:-runs/leduc-curve-$(date +%Y%m%d-%H%M%S)}
shift || true
build/bin/cfr-run configs/leduc.toml --run-dir "$run_dir" "$@" > "$run_dir.log"
python3 - "$run_dir/metrics.jsonl" <<'PY'
import json, sys
wall = 0.0
print("| iteration | wall (min) | exploitability | memory average |")
print("| ---: | ---: | ---: | ---: |")
for line in open(sys.argv[1]):
    j = json.loads(line)
    wall += j["iteration_seconds"]
    if "exploitability" in j:
        print(f"| {j['iteration']} | {wall / 60:.1f} | {j['exploitability']:.4f} | {j.get('exploitability_memory_average', float('nan')):.4f} |")
PY
build/bin/cfr-plot "$run_dir" > /dev/null && echo "plots: $run_dir/plots"
