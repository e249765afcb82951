#!/usr/bin/env python3
"""check_same_run.py RUN_DIR_A RUN_DIR_B [--expect-different]: the two runs' metrics.jsonl agree on
every iteration's sample digest, node count, losses, memory sizes and evaluations (the same config
and seed reproduce the same run). Every compared key must be in both runs' lines (a key missing from
both would otherwise compare equal), and so must the evaluations of every iteration on the
evaluation.eval_every schedule and of the last one; elsewhere an evaluation is the end of one run's
stint before a --resume, compared where both runs made it. With --expect-different, passes only if their sample digests differ somewhere (an
option that should change the run does); every line must then hold a sample digest."""
import json, sys, tomllib

def load(d):
    with open(f"{d}/metrics.jsonl") as f:
        return [json.loads(l) for l in f]

args = [x for x in sys.argv[1:] if not x.startswith("--")]
a, b = load(args[0]), load(args[1])
problems = []
if not a or not b:
    problems.append(f"no iterations: {len(a)} lines vs {len(b)}")
if len(a) != len(b):
    problems.append(f"{len(a)} lines vs {len(b)}")

def present(k, x, y, i):
    """Both lines hold k (each missing one is a problem naming the key and the iteration)."""
    for run, line in (("A", x), ("B", y)):
        if k not in line:
            problems.append(f"line {i + 1} (iteration {line.get('iteration')}): run {run} has no {k}")
    return k in x and k in y

for i, (x, y) in enumerate(zip(a, b)):
    if present("iteration", x, y, i) and x["iteration"] != y["iteration"]:
        problems.append(f"line {i + 1}: iteration {x['iteration']} vs {y['iteration']}")

if "--expect-different" in sys.argv:
    differ = [x["iteration"] for i, (x, y) in enumerate(zip(a, b))
              if present("sample_digest", x, y, i) and x["sample_digest"] != y["sample_digest"]]
    if not differ:
        problems.append("the runs have the same samples")
    for p in problems:
        print(p)
    print(f"PASS: sample digests differ at iterations {differ}" if not problems else "FAIL")
    sys.exit(0 if not problems else 1)

algorithms = {tomllib.load(open(f"{d}/config.toml", "rb"))["algorithm"]["name"] for d in args[:2]}
if algorithms == {"mmd"}:  # MMD's iteration: rollouts, one iteration's samples, policy and value losses
    keys = ["sample_digest", "nodes", "samples", "loss_policy", "loss_value", "policy_gradient", "opponent_snapshot"]
else:
    keys = ["sample_digest", "nodes", "loss_advantage", "loss_strategy", "memory_size"]
# Lost Cities' match reports are compared without their timings.
eval_keys = ["nash_conv", "exploitability", "exploitability_memory_average", "advantage_fit_l1", "evaluation",
             "exploitability_snapshots", "value_error", "value"]
def value(line, k):
    if k == "value":  # ESCHER's value step, without its timings
        return {f: v for f, v in line[k].items() if not f.endswith("seconds")}
    if k != "evaluation":
        return line[k]
    return {bot: {f: v for f, v in r.items() if f not in ("seconds", "games_per_second")} for bot, r in line[k].items()}
every = {tomllib.load(open(f"{d}/config.toml", "rb"))["evaluation"]["eval_every"] for d in args[:2]}
for i, (x, y) in enumerate(zip(a, b)):
    it = x.get("iteration", 0)
    scheduled = i == len(a) - 1 or any(e > 0 and it % e == 0 for e in every)
    for k in keys + [k for k in eval_keys if (k in x or k in y) and (scheduled or (k in x and k in y))]:
        if present(k, x, y, i) and value(x, k) != value(y, k):
            problems.append(f"iteration {x.get('iteration')}: {k} differs: {value(x, k)} vs {value(y, k)}")
for p in problems:
    print(p)
print("PASS: identical digests, nodes, losses and evaluations" if not problems else "FAIL")
sys.exit(0 if not problems else 1)
