#!/usr/bin/env bash
# Soak run: smoke-sized nets (16×1) for MINUTES (default 30) on Lost Cities, memories small
# enough to fill in the first minutes, then a table of resident memory (rss_bytes of
# metrics.jsonl) over time: after the memories fill, RSS must stay flat.
#   bench/soak.sh [MINUTES] [RUN_DIR]
# RUN_DIR is read from the current directory (default: the checkout's runs/soak-DATE).
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
run_dir=$(abspath "${2:-}")
cd "$(dirname "$0")/.."
minutes=${1:-30}
run_dir=${run_dir:-runs/soak-$(date +%Y%m%d-%H%M%S)}
build/bin/cfr-run configs/smoke.toml --run-dir "$run_dir" \
  --set run.experiment_name=soak --set run.max_iterations=100000000 --set run.max_minutes="$minutes" \
  --set traversal.traversals_per_player=64 --set traversal.max_nodes_per_traversal=0 --set scheduler.interleaved.window=64 \
  --set optimization.advantage_updates_per_iteration=16 --set optimization.strategy_updates_per_iteration=16 \
  --set optimization.advantage_batch_size=256 --set optimization.strategy_batch_size=256 \
  --set memory.advantage_capacity=100000 --set memory.strategy_capacity=100000 \
  --set evaluation.eval_every=200 --set evaluation.games=20 --set checkpoint.save_every=0 > "$run_dir.log" 2>&1 || {
  tail -n 20 "$run_dir.log"; exit 1; }
python3 - "$run_dir/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t, out = 0.0, []
for r in rows:
    t += r["iteration_seconds"]
    out.append((t / 60, r["iteration"], r["rss_bytes"] / 2**20, sum(r["memory_size"])))
print(f"{len(rows)} iterations in {t / 60:.1f} min")
print("| minute | iteration | RSS (MiB) | samples in memories |")
print("| ---: | ---: | ---: | ---: |")
marks = sorted({0, 1, 2, 5, 10, 15, 20, 25, 30, 45, 60} | {int(out[-1][0])})
for m in marks:
    row = min(out, key=lambda o: abs(o[0] - m))
    if abs(row[0] - m) <= 1: print(f"| {row[0]:.1f} | {row[1]} | {row[2]:.1f} | {row[3]} |")
full = [o for o in out if o[3] >= 300000]
if full:
    rss = [o[2] for o in full]
    print(f"after the memories filled (minute {full[0][0]:.1f}): RSS min {min(rss):.1f} MiB, max {max(rss):.1f} MiB, "
          f"last {rss[-1]:.1f} MiB; growth {rss[-1] - rss[0]:+.1f} MiB over {full[-1][0] - full[0][0]:.1f} min")
PY
