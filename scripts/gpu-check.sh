#!/usr/bin/env bash
# The one prepared script for a lent GPU machine (issue: the GPU path). Run from the repository
# root there, with .deps/ carried (scripts/pack-deps.sh) and OUT set to a folder that comes back:
#   1. builds against PyTorch's bundled LibTorch (scripts/build-gpu.sh);
#   2. the batch table on cuda (inference and a training step, fp32 and bf16 in alternation) and
#      on cpu for contrast;
#   3. Lost Cities traversal throughput, pooled scheduler on all cores, default-size nets on cuda;
#   4. the default config's iteration breakdown on the GPU (3 iterations), in fp32 then in bf16.
# Everything lands in $OUT (logs, CSV/JSON, metrics.jsonl); nvidia-smi and lscpu describe the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
{ nvidia-smi; lscpu | head -20; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  command -v nvcc; } > "$OUT/machine.txt" 2>&1  # which CUDA headers the build took: build.log, "cfr: CUDA runtime headers"
scripts/build-gpu.sh build-gpu > "$OUT/build.log" 2>&1 || { tail -n 50 "$OUT/build.log"; exit 1; }
B=build-gpu/bin
$B/cfr-bench-batch configs/gpu.toml --device cuda --train --precisions fp32,bf16 --batches 1,4,16,64,256,1024,4096 \
  --csv "$OUT/batch_cuda.csv" --json "$OUT/batch_cuda.json" 2>&1 | tee "$OUT/batch_cuda.txt"
$B/cfr-bench-batch configs/gpu.toml --device cpu --batches 1,16,256,1024 --repeats 3 2>&1 | tee "$OUT/batch_cpu.txt"
cores=$(nproc)
rm -f "$OUT/summary.txt"
for precision in fp32 bf16; do
  dir=run_gpu; [ "$precision" = fp32 ] || dir=run_gpu_$precision
  $B/cfr-run configs/gpu.toml --run-dir "$OUT/$dir" --set run.max_iterations=3 --set scheduler.pooled.threads="$cores" \
    --set evaluation.eval_every=0 --set evaluation.games=0 --set checkpoint.save_every=0 --set network.precision=$precision \
    2>&1 | tee "$OUT/$dir.txt"
  python3 - "$OUT/$dir/metrics.jsonl" "$precision" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    print(f"{sys.argv[2]} iteration {m['iteration']}: {m['iteration_seconds']:.2f} s (traversal {m['traversal_seconds']:.2f} s at "
          f"{m['nodes_per_second']:.0f} nodes/s, batch {m['batch_mean']:.1f}; training {m['train_seconds']:.2f} s)")
PY
done
