#!/usr/bin/env python3
"""check_run.py --max-seconds S --metric NAME --below X -- COMMAND...

Runs a cfr-run command and passes iff it exits 0 within S seconds of wall time and the last
value of NAME in <run-dir>/metrics.jsonl is below X (a list's largest entry: one per network).
Prints the metric's curve."""
import json, subprocess, sys, time

args = sys.argv[1:]
sep = args.index("--")
opts, cmd = args[:sep], args[sep + 1:]
o = dict(zip(opts[::2], opts[1::2]))
limit, metric, below = float(o["--max-seconds"]), o["--metric"], float(o["--below"])
run_dir = cmd[cmd.index("--run-dir") + 1]
t0 = time.time()
rc = subprocess.call(cmd)
wall = time.time() - t0
curve = []
with open(f"{run_dir}/metrics.jsonl") as f:
    for line in f:
        j = json.loads(line)
        if metric in j:
            v = j[metric]
            curve.append((j["iteration"], max(v) if isinstance(v, list) else v))
print(f"wall {wall:.1f}s, {metric}: " + ", ".join(f"{i}:{v:.4f}" for i, v in curve))
ok = rc == 0 and wall <= limit and curve and curve[-1][1] < below
print("PASS" if ok else f"FAIL (rc {rc}, limit {limit}s, need {metric} < {below})")
sys.exit(0 if ok else 1)
