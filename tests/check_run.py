#!/usr/bin/env python3
"""check_run.py --metric NAME --below X [--metric NAME2 --below X2 ...] -- COMMAND...

Runs a cfr-run command and passes iff it exits 0 and its last iteration's line in
<run-dir>/metrics.jsonl holds every NAME with a value below its X (a list's largest entry: one per
network).
Prints the metric's curve and the wall time; the time is not a pass condition (speed targets are
measured by benchmarks, and the test's TIMEOUT bounds it)."""
import json, subprocess, sys, time

args = sys.argv[1:]
sep = args.index("--")
opts, cmd = args[:sep], args[sep + 1:]
pairs = list(zip(opts[::2], opts[1::2]))
metrics = [v for k, v in pairs if k == "--metric"]
belows = [float(v) for k, v in pairs if k == "--below"]
if not metrics or len(metrics) != len(belows) or len(pairs) != 2 * len(metrics):
    sys.exit("check_run.py: give --metric NAME --below X pairs before --")
run_dir = cmd[cmd.index("--run-dir") + 1]
t0 = time.time()
rc = subprocess.call(cmd)
wall = time.time() - t0
with open(f"{run_dir}/metrics.jsonl") as f:
    lines = [json.loads(line) for line in f]
value = lambda v: max(v) if isinstance(v, list) else v
print(f"wall {wall:.1f}s")
problem = f"exit code {rc}" if rc != 0 else None
for metric, below in zip(metrics, belows):
    curve = [(j["iteration"], value(j[metric])) for j in lines if metric in j]
    print(f"{metric}: " + ", ".join(f"{i}:{v:.4f}" for i, v in curve))
    if problem is not None:
        continue
    if not lines or metric not in lines[-1]:
        problem = f"{metric} missing from the last iteration's line" + (f" (iteration {lines[-1]['iteration']})" if lines else "")
    elif not value(lines[-1][metric]) < below:
        problem = f"{metric} {value(lines[-1][metric])} is not below {below}"
print("PASS" if problem is None else f"FAIL: {problem}")
sys.exit(0 if problem is None else 1)
