#!/usr/bin/env python3
"""check_resume.py CFR_RUN WORK_DIR -- CONFIG [--set k=v]...: a resumed run says what it is.

  a. Without saved memories a resume is not the same run: stdout says "NOT exact" and why, the
     first metrics line after it records resume.exact = false; parts/ keeps both parts' configs.
  b. With memories, a changed training key is refused (exit 2, naming the key) and the run
     directory is left exactly as it was; with --allow-training-changes it runs, "NOT exact",
     recording the change; a later resume without changes is exact (resume.exact = true).
  c. --allow-training-changes without --resume is bad input."""
import hashlib, json, os, shutil, subprocess, sys

cfr_run, work = sys.argv[1:3]
base = sys.argv[sys.argv.index("--") + 1:]
failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def run(*args):
    r = subprocess.run([cfr_run, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def metrics(d):
    return [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl"))]


def line_of(d, it):
    return next((m for m in metrics(d) if m["iteration"] == it), {})


def tree_digest(d):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        for f in sorted(files):
            h.update(os.path.join(root, f).encode())
            h.update(open(os.path.join(root, f), "rb").read())
    return h.hexdigest()


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# a. no memories
a = os.path.join(work, "a")
rc, out = run(*base, "--run-dir", a, "--set", "run.max_iterations=2", "--set", "checkpoint.include_memories=false")
check(rc == 0, f"a: first part exits 0 (got {rc})")
rc, out = run("--resume", a, "--set", "run.max_iterations=3")
check(rc == 0 and "resumed from the checkpoint of iteration 2: NOT exact: the checkpoint has no memories" in out,
      f"a: resume without memories says NOT exact and why (exit {rc})")
r = line_of(a, 3).get("resume", {})
check(r.get("exact") is False and r.get("from_iteration") == 2 and r.get("part") == 2,
      f"a: metrics of iteration 3 record resume.exact = false, from_iteration 2, part 2: {r}")
parts = sorted(os.listdir(os.path.join(a, "parts")))
check(parts == ["part-001.toml", "part-002.toml"], f"a: parts/ holds both parts' configs: {parts}")
p1 = open(os.path.join(a, "parts", "part-001.toml")).read()
p2 = open(os.path.join(a, "parts", "part-002.toml")).read()
check("max_iterations = 2" in p1 and "max_iterations = 3" in p2 and "NOT exact" in p2,
      "a: part-001 keeps the first part's max_iterations, part-002 the resumed one's and its verdict")

# b. memories; a training key changed
b = os.path.join(work, "b")
rc, out = run(*base, "--run-dir", b, "--set", "run.max_iterations=2", "--set", "checkpoint.include_memories=true")
check(rc == 0, f"b: first part exits 0 (got {rc})")
before = tree_digest(b)
rc, out = run("--resume", b, "--set", "run.max_iterations=3", "--set", "optimization.learning_rate=0.5")
check(rc == 2 and "optimization.learning_rate" in out and "--allow-training-changes" in out,
      f"b: a changed training key is refused naming it (exit {rc}): {out.strip()[-200:]}")
check(tree_digest(b) == before, "b: the refused resume left the run directory as it was")
rc, out = run("--resume", b, "--set", "run.max_iterations=3", "--set", "optimization.learning_rate=0.5",
              "--allow-training-changes")
check(rc == 0 and "NOT exact: training keys changed" in out, f"b: allowed, the change is stated (exit {rc})")
r = line_of(b, 3).get("resume", {})
changed = {c["key"]: c for c in r.get("changed_keys", [])}
check(r.get("exact") is False and changed.get("optimization.learning_rate", {}).get("training") is True
      and changed.get("run.max_iterations", {}).get("training") is False,
      f"b: metrics record the changed keys, training or not: {r}")
rc, out = run("--resume", b, "--set", "run.max_iterations=4")
check(rc == 0 and "resumed from the checkpoint of iteration 3: exact" in out, f"b: an unchanged resume is exact (exit {rc})")
check(line_of(b, 4).get("resume", {}).get("exact") is True, "b: metrics of iteration 4 record resume.exact = true")

# c.
rc, out = run(*base, "--run-dir", os.path.join(work, "c"), "--allow-training-changes")
check(rc == 2 and "--allow-training-changes needs --resume" in out, f"c: --allow-training-changes alone is refused (exit {rc})")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
