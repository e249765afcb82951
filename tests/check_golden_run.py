#!/usr/bin/env python3
"""check_golden_run.py GOLDEN.jsonl RUN_DIR [--record] -- CFR_RUN ARGS...: a run reproduces the
recorded one.

Runs `CFR_RUN ARGS... --run-dir RUN_DIR` (RUN_DIR removed first). GOLDEN.jsonl holds, per
iteration, the sample digest, node count, losses and memory sizes of a run recorded before a
refactor (tests/golden/no_change/README.md says with which command and revision). Passes iff the
run exits 0 and its metrics.jsonl has exactly the same iterations and, in each, the same value of
every recorded key (a key missing on either side fails). --record writes GOLDEN instead."""
import json, shutil, subprocess, sys

KEYS = ["iteration", "sample_digest", "nodes", "loss_advantage", "loss_strategy", "memory_size"]

golden, run_dir = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:]
shutil.rmtree(run_dir, ignore_errors=True)
rc = subprocess.call(cmd + ["--run-dir", run_dir], stdout=subprocess.DEVNULL)
if rc != 0:
    print(f"FAIL: {' '.join(cmd)} exited {rc}")
    sys.exit(1)
lines = [json.loads(l) for l in open(f"{run_dir}/metrics.jsonl")]
if "--record" in sys.argv:
    with open(golden, "w") as f:
        for m in lines:
            f.write(json.dumps({k: m[k] for k in KEYS}, sort_keys=True) + "\n")
    print(f"recorded {len(lines)} iterations into {golden}")
    sys.exit(0)
want = [json.loads(l) for l in open(golden)]
bad = []
if len(lines) != len(want) or not want:
    bad.append(f"{len(lines)} iterations in the run, {len(want)} recorded")
for got, exp in zip(lines, want):
    for k in KEYS:
        if k not in got or k not in exp:
            bad.append(f"iteration {exp.get('iteration')}: key {k} missing ({'run' if k not in got else 'golden'})")
        elif got[k] != exp[k]:
            bad.append(f"iteration {exp['iteration']}: {k} {got[k]} != recorded {exp[k]}")
print("\n".join(bad) if bad else f"PASS: {len(want)} iterations identical to {golden}")
sys.exit(1 if bad else 0)
