#!/usr/bin/env python3
"""check_paired_diff.py CFR_ARENA SOURCE_DIR WORK_DIR: cfr-arena --json --per-game and
scripts/paired_diff.py (docs/evaluation.md "Paired comparisons of two matches"):
  1. the per-game score differences add up to the report's average, and the match's seed is in it;
  2. a report against itself: paired difference 0 with standard error 0;
  3. heuristic_expert against heuristic_balanced (A) beside heuristic_balanced's mirror match (B,
     deterministic: every deal's two games cancel): the paired difference is A's average minus B's
     and its standard error is A's duplicate-deal standard error;
  4. refused, exit 2 naming the cause: two different seeds, a report without --per-game, and
     --per-game without --json.
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import shutil
import subprocess
import sys

arena, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
script = os.path.join(src, "scripts", "paired_diff.py")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def match(name, bot0, bot1, seed, *extra):
    cmd = [arena, "--bot0", bot0, "--bot1", bot1, "--games", "100", "--seed", str(seed), "--json", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-800:]}")
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        f.write(p.stdout)
    return path, json.loads(p.stdout)


def paired(a, b, expect=0):
    p = subprocess.run(["/usr/bin/python3", script, a, b, "--json"], capture_output=True, text=True, timeout=60, cwd=work)
    if p.returncode != expect:
        fail(f"paired_diff.py {a} {b}: exit {p.returncode} (expected {expect}): {p.stderr[-800:]}")
    return json.loads(p.stdout) if expect == 0 else p.stderr


a_path, a = match("a", "heuristic_expert", "heuristic_balanced", 5, "--per-game")
b_path, b = match("b", "heuristic_balanced", "heuristic_balanced", 5, "--per-game")
for r in (a, b):
    for k in ("seed", "score_diffs", "avg_score_diff", "se_score_diff", "games"):
        if k not in r:
            fail(f"--per-game report has no {k}")
    if r["seed"] != 5 or len(r["score_diffs"]) != r["games"] or r["games"] != 100:
        fail(f"--per-game report: seed {r['seed']}, {len(r['score_diffs'])} score_diffs for {r['games']} games")
    if abs(sum(r["score_diffs"]) / r["games"] - r["avg_score_diff"]) > 1e-9:
        fail(f"the per-game differences average {sum(r['score_diffs']) / r['games']}, the report {r['avg_score_diff']}")

self = paired(a_path, a_path)
if self["score_diff"]["mean"] != 0 or self["score_diff"]["se"] != 0 or self["score_rate"]["mean"] != 0:
    fail(f"a report against itself: {self}")

ab = paired(a_path, b_path)
want = a["avg_score_diff"] - b["avg_score_diff"]
if abs(ab["score_diff"]["mean"] - want) > 1e-9:
    fail(f"paired difference {ab['score_diff']['mean']}, the averages' difference {want}")
if abs(b["avg_score_diff"]) > 1e-12 or abs(ab["score_diff"]["se"] - a["se_score_diff"]) > 1e-9:
    fail(f"paired se {ab['score_diff']['se']} (mirror average {b['avg_score_diff']}), A's duplicate se {a['se_score_diff']}")
if not ab["score_rate"]["mean"] > 0.2:
    fail(f"heuristic_expert's score rate over the mirror's: {ab['score_rate']}")

c_path, _ = match("c", "heuristic_balanced", "heuristic_balanced", 6, "--per-game")
err = paired(a_path, c_path, expect=2)
if "seed 5 against 6" not in err:
    fail(f"two seeds: the error does not name them: {err}")
d_path, _ = match("d", "heuristic_expert", "heuristic_balanced", 5)
err = paired(a_path, d_path, expect=2)
if "--per-game" not in err:
    fail(f"a report without --per-game: the error does not say so: {err}")
p = subprocess.run([arena, "--bot0", "random", "--bot1", "random", "--games", "2", "--per-game"], capture_output=True,
                   text=True, timeout=60, cwd=work)
if p.returncode != 2 or "--json" not in p.stderr:
    fail(f"--per-game without --json: exit {p.returncode}: {p.stderr[-400:]}")

print(f"ok: per-game differences add up (seed 5, 100 games); a report against itself 0 +- 0; expert - mirror "
      f"{ab['score_diff']['mean']:+.2f} +- {ab['score_diff']['se']:.2f} = A's average and duplicate se; "
      f"different seeds, a report without --per-game and --per-game without --json refused")
