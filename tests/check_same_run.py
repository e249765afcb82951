#!/usr/bin/env python3
"""check_same_run.py RUN_DIR_A RUN_DIR_B [--expect-different]: the two runs' metrics.jsonl agree on
every iteration's sample digest, node count, losses, memory sizes and evaluations (the same config
and seed reproduce the same run). With --expect-different, passes only if their sample digests
differ somewhere (an option that should change the run does)."""
import json, sys

def load(d):
    with open(f"{d}/metrics.jsonl") as f:
        return [json.loads(l) for l in f]

args = [x for x in sys.argv[1:] if not x.startswith("--")]
a, b = load(args[0]), load(args[1])
if "--expect-different" in sys.argv:
    differ = [x["iteration"] for x, y in zip(a, b) if x.get("sample_digest") != y.get("sample_digest")]
    ok = len(a) > 0 and len(b) > 0 and len(differ) > 0
    print(f"PASS: sample digests differ at iterations {differ}" if ok else "FAIL: the runs have the same samples")
    sys.exit(0 if ok else 1)
keys = ["iteration", "sample_digest", "nodes", "loss_advantage", "loss_strategy", "memory_size"]
# Evaluations where both runs made one (a run also evaluates at its last iteration).
eval_keys = ["exploitability", "exploitability_memory_average", "advantage_fit_l1"]
ok = len(a) == len(b) and len(a) > 0
for x, y in zip(a, b):
    for k in keys:
        if x.get(k) != y.get(k):
            print(f"iteration {x.get('iteration')}: {k} differs: {x.get(k)} vs {y.get(k)}")
            ok = False
    for k in eval_keys:
        if k in x and k in y and x[k] != y[k]:
            print(f"iteration {x.get('iteration')}: {k} differs: {x[k]} vs {y[k]}")
            ok = False
print("PASS: identical digests, nodes, losses and evaluations" if ok else "FAIL")
sys.exit(0 if ok else 1)
