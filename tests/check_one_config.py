#!/usr/bin/env python3
"""check_one_config.py CFR_RUN CFR_EXPORT SOURCE_DIR WORK_DIR: configs/league_styles_2h.toml, the
Lost Cities recipe in one config (docs/strength.md "One config, two hours"), run for 30 short
iterations:
  1. the step follows its schedule: learning_rate / sqrt(1 + (t - 1) / learning_rate_decay_iterations)
     at every iteration t, read from the run's own config.toml;
  2. the cloning weight fades linearly from mmd.bc_weight at iteration 1 to 0 at
     mmd.bc_fade_iterations;
  3. every league opponent is a bot or a heuristic_expert variant (no trained agent's minutes
     hide in the recipe), and each of the config's opponents is in the league's statistics;
  4. resumed for 10 more iterations, the schedule goes on from where it stopped;
  5. cfr-export --average 3 averages the three newest checkpoints (iterations 20, 30, 40).
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import math
import os
import shutil
import subprocess
import sys
import tomllib

run, export, src, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def call(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}{p.stdout[-500:]}")
    return p


def metrics(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


run_dir = os.path.join(work, "run")
small = ["mmd.rollouts_per_iteration=8", "mmd.batch_size=128", "checkpoint.save_every=10", "evaluation.eval_every=0",
         "run.max_minutes=0"]
cmd = [run, os.path.join(src, "configs", "league_styles_2h.toml"), "--run-dir", run_dir, "--set", "run.max_iterations=30"]
for s in small:
    cmd += ["--set", s]
call(cmd)
call([run, "--resume", run_dir, "--set", "run.max_iterations=40"])

with open(os.path.join(run_dir, "config.toml"), "rb") as f:
    cfg = tomllib.load(f)
lr0 = cfg["optimization"]["learning_rate"]
decay = cfg["optimization"]["learning_rate_decay_iterations"]
bc0 = cfg["mmd"]["bc_weight"]
fade = cfg["mmd"]["bc_fade_iterations"]
if not (decay > 0 and fade > 1 and bc0 > 0):
    fail(f"the config has no decaying step or fading clone: decay {decay}, bc_fade_iterations {fade}, bc_weight {bc0}")

rows = metrics(run_dir)
seen = sorted(m["iteration"] for m in rows)
if seen != list(range(1, 41)):
    fail(f"iterations {seen[:3]}...{seen[-3:]} ({len(seen)}), expected 1..40 once each")
for m in rows:
    t = m["iteration"]
    if "learning_rate" not in m or "bc_weight" not in m:
        fail(f"iteration {t}: metrics lack learning_rate or bc_weight")
    want_lr = lr0 / math.sqrt(1 + (t - 1) / decay)
    if abs(m["learning_rate"] - want_lr) > 1e-12 * lr0:
        fail(f"iteration {t}: learning_rate {m['learning_rate']}, expected {want_lr}")
    want_bc = bc0 * max(0.0, 1 - (t - 1) / (fade - 1))
    if abs(m["bc_weight"] - want_bc) > 1e-12:
        fail(f"iteration {t}: bc_weight {m['bc_weight']}, expected {want_bc}")

opponents = cfg["mmd"]["opponents"]
if any(o.startswith("checkpoint") for o in opponents):
    fail(f"the league holds a trained agent: {opponents}")
league = rows[-1].get("league", {})
missing = [o for o in opponents if o not in league]
if missing:
    fail(f"the league's statistics lack {missing}")
games = sum(v["games"] for v in league.values())
if games == 0:
    fail("no league games were played")

out = os.path.join(work, "avg3")
call([export, run_dir, out, "--average", "3"])
with open(os.path.join(out, "manifest.json")) as f:
    averaged = json.load(f).get("averaged_iterations")
if averaged != [20, 30, 40]:
    fail(f"cfr-export --average 3 averaged {averaged}, expected [20, 30, 40]")

last = rows[-1]
print(f"ok: learning rate {lr0:g} -> {last['learning_rate']:.6g} at iteration 40 on the 1/sqrt schedule (decay {decay}), "
      f"cloning weight {bc0:g} -> {last['bc_weight']:.6g} fading over {fade}, resumed on schedule; "
      f"{len(opponents)} bot opponents, {games} league games; averaged iterations [20, 30, 40]")
