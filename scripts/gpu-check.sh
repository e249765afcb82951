#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (issue: the GPU path). Run from the repository
# root there, with .deps/ carried (scripts/pack-deps.sh) and OUT set to a folder that comes back:
#   1. builds cfr-run and cfr-bench-batch against PyTorch's bundled LibTorch (scripts/build-gpu.sh);
#   2. the batch table on cuda (inference and a training step, fp32 and bf16 in alternation);
#   3. the GPU config's iteration breakdown (3 iterations of configs/gpu.toml: reference-size nets,
#      pooled scheduler on all cores), in fp32 then in bf16;
#   4. learning on cuda, where it is exact: Leduc Deep CFR (configs/leduc.toml) for
#      GPU_CHECK_SECONDS (default 45) each in fp32 and bf16, exploitability every 10 iterations;
#   5. MMD configs/strong.toml on cuda as long in fp32 and bf16 (iterations a minute);
#   6. the batch table on this machine's CPU for contrast.
# The steps are in order of importance and each has its own time limit, so that a run cut short
# still returns the first ones. $OUT gets summary.txt (one line per iteration, the build's time),
# machine.txt (nvidia-smi, lscpu, versions) and gpu-check.tgz, refreshed after every step: each
# step's log, the batch tables' CSV/JSON and the runs' folders (a device machine returns 8 files).
# A dry run of steps 2-6 on any machine: GPU_CHECK_BIN=build/bin GPU_CHECK_DEVICE=cpu (no build).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check-out}  # the device tool sets OUT; elsewhere results go under /tmp, not the checkout
DEV=${GPU_CHECK_DEVICE:-cuda}
SECONDS_EACH=${GPU_CHECK_SECONDS:-45}
WORK=${GPU_CHECK_WORK:-/tmp/gpu-check}
rm -rf "$WORK"; mkdir -p "$OUT" "$WORK"; rm -f "$OUT/summary.txt"
{ nvidia-smi; lscpu | head -20; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  command -v nvcc; g++ --version | head -1; } > "$OUT/machine.txt" 2>&1
if [ -n "${GPU_CHECK_BIN:-}" ]; then
  B=$GPU_CHECK_BIN
else
  # Only what the check runs: no tests, Python module or MPI (the machine's wheels bring mpi4py).
  start=$(date +%s)
  CMAKE_ARGS="-DCFR_BUILD_TESTS=OFF -DCFR_BUILD_PYTHON=OFF -DCFR_WITH_MPI=OFF" \
    scripts/build-gpu.sh build-gpu cfr-run cfr-bench-batch > "$WORK/build.log" 2>&1 || { cp "$WORK/build.log" "$OUT/"; tail -n 60 "$OUT/build.log"; exit 1; }
  { grep -E '^-- cfr:' "$WORK/build.log"; echo "build: $(( $(date +%s) - start )) s"; } | tee "$OUT/summary.txt"
  B=build-gpu/bin
fi
pack() { tar czf "$OUT/gpu-check.tgz.part" --exclude=checkpoints -C "$WORK" . && mv "$OUT/gpu-check.tgz.part" "$OUT/gpu-check.tgz"; }
step() { local name=$1 limit=$2; shift 2; echo "== $name"; timeout "$limit" "$@" > "$WORK/$name.txt" 2>&1
  echo "$name: exit $?" | tee -a "$OUT/summary.txt"; tail -n 25 "$WORK/$name.txt"; pack; }
summary() {  # summary DIR LABEL: DIR/metrics.jsonl, a line an iteration (past 12: evaluated, last), the rate
  python3 - "$1/metrics.jsonl" "$2" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError as e:
    print(f"{sys.argv[2]}: no metrics ({e})"); sys.exit(0)
ms = [json.loads(l) for l in lines if l.strip()]
for m in ms:
    s = f"{sys.argv[2]} iteration {m['iteration']}: {m.get('iteration_seconds', 0):.3f} s"
    for k in ("traversal_seconds", "rollout_seconds", "train_seconds"):
        if k in m: s += f", {k.split('_')[0]} {m[k]:.3f} s"
    if "nodes_per_second" in m: s += f", {m['nodes_per_second']:.0f} nodes/s"
    if "batch_mean" in m: s += f", batch {m['batch_mean']:.1f}"
    if "exploitability" in m: s += f", exploitability {m['exploitability']:.4f}"
    if len(ms) <= 12 or "exploitability" in m or m is ms[-1]: print(s)
if ms:
    t = sum(m.get("iteration_seconds", 0) for m in ms)
    print(f"{sys.argv[2]}: {len(ms)} iterations in {t:.1f} s of iterations, {60 * len(ms) / t if t else 0:.1f} a minute")
PY
}
step batch_"$DEV" 150 $B/cfr-bench-batch configs/gpu.toml --device "$DEV" --train --precisions fp32,bf16 \
  --batches 1,4,16,64,256,1024,4096 --repeats 5 --csv "$WORK/batch_$DEV.csv" --json "$WORK/batch_$DEV.json"
cores=$(nproc)
for p in fp32 bf16; do
  step run_gpu_$p 120 $B/cfr-run configs/gpu.toml --run-dir "$WORK/run_gpu_$p" --set run.max_iterations=3 \
    --set run.device="$DEV" --set scheduler.pooled.threads="$cores" --set evaluation.eval_every=0 \
    --set evaluation.games=0 --set checkpoint.save_every=0 --set network.precision=$p
  summary "$WORK/run_gpu_$p" "gpu.toml $p"
done
minutes=$(python3 -c "print($SECONDS_EACH / 60)")
for p in fp32 bf16; do
  step leduc_$p $((SECONDS_EACH + 60)) $B/cfr-run configs/leduc.toml --run-dir "$WORK/leduc_$p" --set run.device="$DEV" \
    --set run.max_minutes="$minutes" --set network.precision=$p --set checkpoint.save_every=0
  summary "$WORK/leduc_$p" "leduc $p"
done
for p in fp32 bf16; do
  step strong_$p $((SECONDS_EACH + 60)) $B/cfr-run configs/strong.toml --run-dir "$WORK/strong_$p" --set run.device="$DEV" \
    --set run.max_minutes="$minutes" --set network.precision=$p --set checkpoint.save_every=0 --set evaluation.eval_every=0
  summary "$WORK/strong_$p" "strong.toml $p"
done
[ "$DEV" = cpu ] || step batch_cpu 60 $B/cfr-bench-batch configs/gpu.toml --device cpu --batches 1,16,256,1024 --repeats 3
pack
cat "$OUT/summary.txt"
exit 0
