#!/usr/bin/env bash
# Distributed scaling on this machine: the same config with 1 process and with mpirun -np 2, 3
# (1 and 2 traversal ranks); traversal nodes/s and iteration time, averaged over iterations ≥ 2.
#   bench/scaling.sh [CONFIG] [ITERATIONS] [--set k=v ...]
# CONFIG is read from the current directory (default: the checkout's
# configs/quickstart_deep_cfr.toml); BIN names the programs' folder (default build/bin). The runs
# go into a mktemp folder, removed at the end whatever happens.
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
config='' iters=4
if [ $# -gt 0 ] && [[ $1 != --* ]]; then config=$(abspath "$1"); shift; fi
if [ $# -gt 0 ] && [[ $1 != --* ]]; then iters=$1; shift; fi
bin=$(abspath "${BIN:-}")
cd "$(dirname "$0")/.."
config=${config:-configs/quickstart_deep_cfr.toml}
bin=${bin:-build/bin}
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--set run.max_iterations="$iters" --set evaluation.eval_every=0 --set evaluation.games=0 --set checkpoint.save_every=0 "$@")
"$bin/cfr-run" "$config" --run-dir "$work/np1" "${common[@]}" > /dev/null
for np in 2 3; do "${mpirun[@]}" -np $np "$bin/cfr-run" "$config" --run-dir "$work/np$np" "${common[@]}" > /dev/null; done
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
