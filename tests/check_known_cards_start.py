#!/usr/bin/env python3
"""check_known_cards_start.py CFR_RUN CFR_ARENA SOURCE_DIR WORK_DIR: mmd.initial_policy from a
policy trained without encoding.opponent_known_cards and encoding.slot_cards starts a run that has
them, and sits in its league (docs/mmd.md):
  1. the shipped agent (297 inputs) starts a 499-input run whose league holds it too: the run says
     its first layer was widened for both blocks;
  2. after one iteration at a learning rate of 1e-12 the new policy plays exactly as the shipped
     agent: the two, greedy, on duplicate deals, score the same (difference 0.0, win rate 0.5);
  3. the same start into a larger network (3 layers of 320 units where the agent has 2 of 256) is
     grown (grow_mlp): the run says so, and it too plays exactly as the shipped agent;
  4. a policy trained with other rules is refused (exit 2) naming mmd.initial_policy.
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import shutil
import subprocess
import sys

run, arena, src, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def cfr_run(run_dir, *sets, expect=0):
    cmd = [run, os.path.join(src, "configs", "league.toml"), "--run-dir", run_dir,
           "--set", f"mmd.initial_policy=checkpoint:{os.path.join(src, 'models', 'lost-cities-mmd')}",
           "--set", f'mmd.opponents=["heuristic_expert", "checkpoint:{os.path.join(src, "models", "lost-cities-mmd")}"]',
           "--set", "run.max_iterations=1", "--set", "mmd.rollouts_per_iteration=8", "--set", "evaluation.games=20",
           "--set", "encoding.opponent_known_cards=true", "--set", "encoding.slot_cards=true"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode} (expected {expect}): {p.stderr[-1500:]}{p.stdout[-500:]}")
    return p


widened = os.path.join(work, "widened")
p = cfr_run(widened, "optimization.learning_rate=1e-12")
if "first layer widened with zero weights for encoding.opponent_known_cards, encoding.slot_cards" not in p.stdout + p.stderr:
    fail(f"the run does not say it widened the initial policy: {p.stdout[-800:]}")



def against_shipped(run_dir, what):
    m = subprocess.run([arena, "--bot0", f"checkpoint:{run_dir}", "--bot1",
                        f"checkpoint:{os.path.join(src, 'models', 'lost-cities-mmd')}", "--games", "20", "--seed", "3", "--json"],
                       capture_output=True, text=True, timeout=300, cwd=work)
    if m.returncode != 0:
        fail(f"cfr-arena: exit {m.returncode}: {m.stderr[-800:]}")
    r = json.loads(m.stdout)
    for k in ("avg_score_diff", "win_rate", "wins", "games"):
        if k not in r:
            fail(f"cfr-arena's report has no {k}")
    if r["games"] != 20 or r["avg_score_diff"] != 0.0 or r["win_rate"] != 0.5 or r["wins"] == 0:
        fail(f"the {what} policy does not play as the shipped agent: {r}")
    return r


r = against_shipped(widened, "widened")

grown = os.path.join(work, "grown")
p = cfr_run(grown, "optimization.learning_rate=1e-12", "network.hidden_size=320", "network.num_layers=3")
if "grown from 2×256 to 3×320" not in p.stdout + p.stderr:
    fail(f"the run does not say it grew the initial policy: {p.stdout[-800:]}")
rg = against_shipped(grown, "grown")

bad = cfr_run(os.path.join(work, "bad"), "rules.bonus_amount=10", 'mmd.opponents=["heuristic_expert"]', expect=2)
if "mmd.initial_policy" not in bad.stderr or "other rules" not in bad.stderr:
    fail(f"other rules: the error does not name mmd.initial_policy and the rules: {bad.stderr[-800:]}")

print(f"ok: widened start plays as the shipped agent ({r['wins']} wins each side, difference "
      f"{r['avg_score_diff']}); grown to 3x320 it too ({rg['wins']} wins each side, difference {rg['avg_score_diff']}); "
      f"other rules refused")
