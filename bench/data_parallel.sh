#!/usr/bin/env bash
# bench/data_parallel.sh [CONFIG] [ITERATIONS] [ROUNDS] [-- --set k=v ...]: training time of one
# learner against data-parallel learners (distributed.learners, docs/distributed.md), in
# alternation: one process, mpirun -np 2 with distributed.learners = 1 (rank 0 trains alone, rank 1
# traverses) and with distributed.learners = 2 (both train, each half of every batch). Prints per
# run the medians over iterations 2..ITERATIONS of train_seconds (the iteration's training phase)
# and of the steps' seconds (train_breakdown.total_seconds over the steps of the three networks;
# exchange_seconds: of which sending shards and summing gradients, waits included), and the loss
# of the strategy net at the last iteration. Run directories under a mktemp folder.
set -euo pipefail
config=${1:-configs/quickstart_deep_cfr.toml}
iterations=${2:-6}
rounds=${3:-2}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
bin=${CFR_RUN:-build/bin/cfr-run}
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
work=$(mktemp -d /tmp/cfr-data-parallel.XXXXXX)
common=(--set run.max_iterations="$iterations" --set run.max_minutes=0 --set evaluation.games=0 --set evaluation.eval_every=0 "$@")
report() {  # NAME RUN_DIR
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[2] + "/metrics.jsonl")][1:]
train = statistics.median(l["train_seconds"] for l in lines)
steps = statistics.median(l["train_breakdown"]["total_seconds"] for l in lines)
exchange = statistics.median(l["train_breakdown"].get("exchange_seconds", 0.0) for l in lines)
it = statistics.median(l["iteration_seconds"] if "iteration_seconds" in l else l["traversal_seconds"] + l["train_seconds"] for l in lines)
print(f"{sys.argv[1]:<22} train_seconds {train:7.3f}  steps_seconds {steps:7.3f}  exchange_seconds {exchange:6.3f}  "
      f"iteration_seconds {it:7.3f}  "
      f"loss_strategy {lines[-1]['loss_strategy']:.6f}")
EOF
}
echo "# $(git rev-parse --short HEAD) $config iterations=$iterations $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  echo "# round $round"
  "$bin" "$config" --run-dir "$work/one-$round" "${common[@]}" >/dev/null 2>&1
  report "1 process" "$work/one-$round"
  for learners in 1 2; do
    "${mpirun[@]}" -np 2 "$bin" "$config" --run-dir "$work/np2-l$learners-$round" "${common[@]}" \
      --set distributed.learners="$learners" >/dev/null 2>&1
    report "np 2, learners $learners" "$work/np2-l$learners-$round"
  done
done
echo "# run directories in $work"
