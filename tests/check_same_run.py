#!/usr/bin/env python3
"""check_same_run.py RUN_DIR_A RUN_DIR_B: the two runs' metrics.jsonl agree on every iteration's
sample digest, node count and losses (the same config and seed reproduce the same run)."""
import json, sys

def load(d):
    with open(f"{d}/metrics.jsonl") as f:
        return [json.loads(l) for l in f]

a, b = load(sys.argv[1]), load(sys.argv[2])
keys = ["iteration", "sample_digest", "nodes", "loss_advantage", "loss_strategy", "memory_size"]
ok = len(a) == len(b) and len(a) > 0
for x, y in zip(a, b):
    for k in keys:
        if x.get(k) != y.get(k):
            print(f"iteration {x.get('iteration')}: {k} differs: {x.get(k)} vs {y.get(k)}")
            ok = False
print("PASS: identical digests, nodes and losses" if ok else "FAIL")
sys.exit(0 if ok else 1)
