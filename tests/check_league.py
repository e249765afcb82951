#!/usr/bin/env python3
"""check_league.py CFR_RUN SOURCE_DIR WORK_DIR: MMD's league and exploiters (mmd.opponents, docs/mmd.md).
  1. an exploiter on Leduc: a briefly trained MMD policy is the target (checkpoint:), every rollout
     plays it (opponent_share = 1); the exploiter's exact value against it ends within MARGIN of the
     exact best response's, and closer than at its first evaluation;
  2. the league's draw follows the results: on Lost Cities against random and heuristic_expert with
     opponent_priority = 3, both are drawn alike at first, then the bot the learner loses to more;
     every rollout is counted against the opponent it played;
  3. a league run (bots and a trained network) resumed from its checkpoint continues exactly
     (sample digests and league statistics equal to the run that did not stop), and is the same
     under the recursive and interleaved schedulers (network.invariant_chunk = 8);
  4. bad opponents are refused (exit 2) naming mmd.opponents or mmd.initial_policy.
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import shutil
import subprocess
import sys

run, src, work = sys.argv[1:4]
MARGIN = 0.15  # exploitability units (chips a hand) between the exploiter's value and the best response's
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def cfr_run(config, run_dir, *sets, resume=False, expect=0):
    cmd = [run, "--resume", run_dir] if resume else [run, config, "--run-dir", run_dir]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode} (expected {expect}): {p.stderr[-1500:]}{p.stdout[-500:]}")
    return p


def metrics(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


# 1. The exploiter on Leduc against the exact best response.
leduc = os.path.join(src, "configs", "leduc_mmd.toml")
target = os.path.join(work, "leduc_target")
cfr_run(leduc, target, "run.max_iterations=10", "evaluation.eval_every=10", "mmd.rollouts_per_iteration=1024")
exploiter = os.path.join(work, "leduc_exploiter")
cfr_run(os.path.join(src, "configs", "leduc_exploiter.toml"), exploiter, f'mmd.opponents=["checkpoint:{target}"]',
        "run.max_minutes=0", "run.max_iterations=120", "evaluation.eval_every=20")
name = f"checkpoint:{target}"
evals = [m["league_exact"][name] for m in metrics(exploiter) if "league_exact" in m]
if len(evals) < 2:
    fail(f"the exploiter run reported {len(evals)} exact league evaluations")
first, last = evals[0], evals[-1]
if not all("value" in e and "best_response_value" in e for e in (first, last)):
    fail(f"league_exact lacks value or best_response_value: {last}")
gap = last["best_response_value"] - last["value"]
first_gap = first["best_response_value"] - first["value"]
if not (0 <= gap <= MARGIN) or gap > first_gap - 0.05:
    fail(f"exploiter: value {first['value']:.4f} -> {last['value']:.4f}, best response {last['best_response_value']:.4f} "
         f"(gap {gap:.4f}, margin {MARGIN})")

# 2. The league's draw follows the results.
lc = os.path.join(src, "configs", "strong.toml")
small = ["network.hidden_size=32", "network.num_layers=1", "mmd.rollouts_per_iteration=64", "mmd.epochs=1",
         "mmd.bc_weight=0.0", "mmd.bot_share=0.0", "mmd.snapshot_share=0.0", "evaluation.games=0",
         "run.max_minutes=0", "checkpoint.save_every=0"]
pfsp = os.path.join(work, "pfsp")
cfr_run(lc, pfsp, *small, "run.max_iterations=4", 'mmd.opponents=["random", "heuristic_expert"]', "mmd.opponent_share=1.0",
        "mmd.opponent_priority=3.0", "mmd.opponent_decay=1.0")
ms = metrics(pfsp)
for m in ms:
    lg = m.get("league", {})
    if set(lg) != {"random", "heuristic_expert"}:
        fail(f"iteration {m['iteration']}: league keys {sorted(lg)}")
    if sum(v["games"] for v in lg.values()) != 64:
        fail(f"iteration {m['iteration']}: {sum(v['games'] for v in lg.values())} league games of 64 rollouts")
p1 = ms[0]["league"]
if abs(p1["random"]["draw_probability"] - 0.5) > 1e-9:
    fail(f"iteration 1 draws {p1['random']['draw_probability']} for random (0.5 expected: no game played yet)")
last_lg = ms[-1]["league"]
if not (last_lg["heuristic_expert"]["score_rate"] < last_lg["random"]["score_rate"] and
        last_lg["heuristic_expert"]["draw_probability"] > last_lg["random"]["draw_probability"] + 0.2):
    fail(f"the league does not favour the opponent the learner loses to: {last_lg}")

# 3. Resume and schedulers, with bots and a trained network in the league.
league = ['mmd.opponents=["heuristic_expert", "heuristic_cautious", "checkpoint:' + os.path.join(src, "models", "lost-cities-mmd") + '"]',
          "mmd.opponent_share=0.6", "mmd.snapshot_share=0.2", "mmd.snapshot_every=1", "mmd.opponent_priority=2.0",
          "network.invariant_chunk=8"]
whole = os.path.join(work, "whole")
cfr_run(lc, whole, *small, *league, "run.max_iterations=4")
part = os.path.join(work, "part")
cfr_run(lc, part, *small, *league, "run.max_iterations=2")
cfr_run(None, part, "run.max_iterations=4", resume=True)
a, b = metrics(whole), metrics(part)
ka = [(m["iteration"], m["sample_digest"], json.dumps(m["league"], sort_keys=True)) for m in a]
kb = [(m["iteration"], m["sample_digest"], json.dumps(m["league"], sort_keys=True)) for m in b]
if ka != kb or len(ka) != 4:
    fail(f"resumed league run differs: {ka} vs {kb}")
rec = os.path.join(work, "recursive")
cfr_run(lc, rec, *small, *league, "run.max_iterations=2", "traversal.scheduler=recursive")
kr = [(m["iteration"], m["sample_digest"]) for m in metrics(rec)]
if kr != [k[:2] for k in ka[:2]]:
    fail(f"recursive and interleaved differ: {kr} vs {[k[:2] for k in ka[:2]]}")

# 4. Bad opponents.
p = cfr_run(lc, os.path.join(work, "bad1"), *small, 'mmd.opponents=["nobody"]', "mmd.opponent_share=0.5", expect=2)
if "mmd.opponents" not in p.stderr or "nobody" not in p.stderr:
    fail(f"an unknown opponent: {p.stderr}")
p = cfr_run(lc, os.path.join(work, "bad2"), *small, f'mmd.opponents=["checkpoint:{target}"]', "mmd.opponent_share=0.5", expect=2)
if "cannot sit at this table" not in p.stderr:
    fail(f"a Leduc checkpoint in a Lost Cities league: {p.stderr}")
p = cfr_run(lc, os.path.join(work, "bad3"), *small, "mmd.initial_policy=checkpoint:" + os.path.join(src, "models", "lost-cities-mmd"),
            expect=2)
if "mmd.initial_policy" not in p.stderr or "network" not in p.stderr:
    fail(f"an initial policy of another shape: {p.stderr}")
if any(os.path.exists(os.path.join(work, d, "checkpoints")) for d in ("bad1", "bad2", "bad3")):
    fail("a refused run wrote checkpoints")

print(f"ok: exploiter value {first['value']:.4f} -> {last['value']:.4f} against best response {last['best_response_value']:.4f} "
      f"(gap {gap:.4f} <= {MARGIN}); league draw heuristic_expert {last_lg['heuristic_expert']['draw_probability']:.2f} vs random "
      f"{last_lg['random']['draw_probability']:.2f}; resumed and recursive runs identical; bad opponents refused")
