#!/usr/bin/env bash
# Deep CFR on Leduc: the exploitability curve against wall time (issue item: ≤ 0.05 within 20
# minutes on 2 cores). Runs configs/leduc.toml (max_minutes = 20) into a run directory, prints
# iteration, cumulative wall seconds and exploitability for each evaluation (and, for ESCHER, the
# value network's error against the exact q), and draws the plots. CONFIG picks another config:
#   bench/leduc_curve.sh [RUN_DIR] [--set section.key=value ...]
#   CONFIG=configs/leduc_escher.toml bench/leduc_curve.sh runs/leduc-escher
#   CONFIG=configs/leduc_mmd.toml bench/leduc_curve.sh runs/leduc-mmd
# RUN_DIR and CONFIG are read from the current directory (defaults: the checkout's
# runs/leduc-curve-DATE and configs/leduc.toml).
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
run_dir='' config=$(abspath "${CONFIG:-}")
if [ $# -gt 0 ] && [[ $1 != --* ]]; then run_dir=$(abspath "$1"); shift; fi
cd "$(dirname "$0")/.."
run_dir=${run_dir:-runs/leduc-curve-$(date +%Y%m%d-%H%M%S)}
build/bin/cfr-run "${config:-configs/leduc.toml}" --run-dir "$run_dir" "$@" > "$run_dir.log"
python3 - "$run_dir/metrics.jsonl" <<'PY'
import json, sys
wall = 0.0
rows = [json.loads(line) for line in open(sys.argv[1])]
escher = any("value_error" in j for j in rows)
print("| iteration | wall (min) | exploitability | memory average |" + (" value error (|q|) | regret error (|r|) |" if escher else ""))
print("| ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if escher else ""))
for j in rows:
    wall += j["iteration_seconds"]
    if "exploitability" in j:
        v = j.get("value_error")
        extra = f" {v['mean_abs_error']:.3f} ({v['mean_abs_q']:.3f}) | {v['regret_error']:.3f} ({v['mean_abs_regret']:.3f}) |" if v else ""
        mem = j.get("exploitability_memory_average")  # MMD has no strategy memory
        print(f"| {j['iteration']} | {wall / 60:.1f} | {j['exploitability']:.4f} | {'—' if mem is None else f'{mem:.4f}'} |" + extra)
PY
build/bin/cfr-plot "$run_dir" > /dev/null && echo "plots: $run_dir/plots"
