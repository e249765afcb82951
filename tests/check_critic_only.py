#!/usr/bin/env python3
"""check_critic_only.py CFR_RUN CFR_ARENA SOURCE_DIR WORK_DIR: mmd.train_policy = false trains the
critic alone (docs/mmd.md "A critic for a fixed policy"):
  1. three iterations from the shipped agent with mmd.train_policy = false: every iteration's metrics
     show value steps and no policy step, and the run's policy plays exactly as the shipped agent
     (greedy, duplicate deals: difference 0.0, win rate 0.5);
  2. the same run with mmd.train_policy = true (the default) takes policy steps and no longer plays
     exactly as the shipped agent (so the comparison of 1 can fail).
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import shutil
import subprocess
import sys

run, arena, src, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shipped = os.path.join(src, "models", "lost-cities-mmd")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def cfr_run(run_dir, train_policy):
    cmd = [run, os.path.join(src, "configs", "league.toml"), "--run-dir", run_dir,
           "--set", f"mmd.initial_policy=checkpoint:{shipped}", "--set", 'mmd.opponents=["heuristic_expert"]',
           "--set", "run.max_iterations=3", "--set", "mmd.rollouts_per_iteration=16", "--set", "evaluation.games=0",
           "--set", "evaluation.eval_every=0", "--set", "optimization.learning_rate=1e-3",
           "--set", f"mmd.train_policy={'true' if train_policy else 'false'}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}{p.stdout[-500:]}")
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "metrics.jsonl"))]
    rows = [r for r in rows if "iteration" in r]
    if len(rows) != 3:
        fail(f"{run_dir}: {len(rows)} iterations in metrics.jsonl, expected 3")
    for r in rows:
        for k in ("value_steps", "policy_gradient", "loss_value"):
            if k not in r:
                fail(f"{run_dir}: iteration {r['iteration']} has no {k} in metrics.jsonl")
        if "steps" not in r["policy_gradient"]:
            fail(f"{run_dir}: iteration {r['iteration']} has no policy_gradient.steps")
    return rows


def against_shipped(run_dir):
    m = subprocess.run([arena, "--bot0", f"checkpoint:{run_dir}", "--bot1", f"checkpoint:{shipped}", "--games", "40",
                        "--seed", "3", "--json"], capture_output=True, text=True, timeout=300, cwd=work)
    if m.returncode != 0:
        fail(f"cfr-arena: exit {m.returncode}: {m.stderr[-800:]}")
    r = json.loads(m.stdout)
    for k in ("avg_score_diff", "win_rate", "games"):
        if k not in r:
            fail(f"cfr-arena's report has no {k}")
    if r["games"] != 40:
        fail(f"cfr-arena played {r['games']} games, expected 40")
    return r


critic = os.path.join(work, "critic")
rows = cfr_run(critic, False)
if any(r["policy_gradient"]["steps"] != 0 for r in rows) or any(r["value_steps"] <= 0 for r in rows):
    fail(f"train_policy=false: policy steps {[r['policy_gradient']['steps'] for r in rows]}, "
         f"value steps {[r['value_steps'] for r in rows]} (expected 0 and > 0)")
same = against_shipped(critic)
if same["avg_score_diff"] != 0.0 or same["win_rate"] != 0.5:
    fail(f"train_policy=false: the policy does not play as the shipped agent: {same}")

both = os.path.join(work, "both")
rows_b = cfr_run(both, True)
if any(r["policy_gradient"]["steps"] <= 0 for r in rows_b):
    fail(f"train_policy=true: policy steps {[r['policy_gradient']['steps'] for r in rows_b]} (expected > 0)")
moved = against_shipped(both)
if moved["avg_score_diff"] == 0.0 and moved["win_rate"] == 0.5:
    fail(f"train_policy=true: the policy still plays exactly as the shipped agent after 3 steps at 1e-3: {moved}")

print(f"ok: train_policy=false took {sum(r['value_steps'] for r in rows)} value steps and no policy step, "
      f"and plays as the shipped agent (difference 0.0); trained, the policy moved "
      f"(difference {moved['avg_score_diff']:+.2f})")
