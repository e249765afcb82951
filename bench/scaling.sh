#!/usr/bin/env bash
# Distributed scaling on this machine: the same config with 1 process and with mpirun -np 2, 3
# (1 and 2 traversal ranks); traversal nodes/s and iteration time, averaged over iterations ≥ 2.
#   bench/scaling.sh [CONFIG] [ITERATIONS] [--set k=v ...]
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/quickstart_deep_cfr.toml}
iters=${2:-4}
shift 2 || true
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
work=$(mktemp -d)
common=(--set run.max_iterations="$iters" --set evaluation.eval_every=0 --set evaluation.games=0 --set checkpoint.save_every=0 "$@")
build/bin/cfr-run "$config" --run-dir "$work/np1" "${common[@]}" > /dev/null
for np in 2 3; do "${mpirun[@]}" -np $np build/bin/cfr-run "$config" --run-dir "$work/np$np" "${common[@]}" > /dev/null; done
python3 - "$work" <<'PY'
import json, sys
print("| processes | traversal ranks | traversal nodes/s | traversal s | training s | iteration s |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for np in (1, 2, 3):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/np{np}/metrics.jsonl")][1:]
    avg = lambda k: sum(r[k] for r in rows) / len(rows)
    print(f"| {np} | {max(np - 1, 0) if np > 1 else '0 (in-process)'} | {avg('nodes_per_second'):,.0f} | {avg('traversal_seconds'):.2f} | "
          f"{avg('train_seconds'):.2f} | {avg('iteration_seconds'):.2f} |")
PY
rm -rf "$work"
