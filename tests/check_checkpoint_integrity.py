#!/usr/bin/env python3
"""check_checkpoint_integrity.py CFR_RUN CFR_EVAL RUN_DIR WORK_DIR: a checkpoint proves itself. For
each file of RUN_DIR's latest checkpoint (nets.pt, memories.bin, config.toml, meta.json) and for
checkpoints/latest, a copy of the run has one byte in the middle of that file flipped; cfr-eval and
cfr-run --resume must both refuse it with exit 2 and a message naming the file, and the refused
resume must leave the copy exactly as it was. The unchanged copy must load (the check can fail)."""
import hashlib, os, shutil, subprocess, sys

cfr_run, cfr_eval, src, work = sys.argv[1:5]
failures = []


def tree_digest(d):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            h.update(p.encode())
            h.update(open(p, "rb").read())
    return h.hexdigest()


def fresh_copy():
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work)
    latest = open(os.path.join(work, "checkpoints", "latest")).read().strip()
    return os.path.join(work, "checkpoints", latest)


def attempts():
    ev = subprocess.run([cfr_eval, work, "--json"], capture_output=True, text=True)
    iters = open(os.path.join(src, "checkpoints", "latest")).read().strip()
    more = int(iters.split("-")[1]) + 1
    before = tree_digest(work)
    run = subprocess.run([cfr_run, "--resume", work, "--set", f"run.max_iterations={more}"], capture_output=True, text=True)
    return ev, run, before


ck = fresh_copy()
if not os.path.exists(os.path.join(ck, "memories.bin")):
    sys.exit(f"FAIL: {ck} has no memories.bin (run the source with checkpoint.include_memories = true)")
ev, run, _ = attempts()
print(f"unchanged copy: cfr-eval exit {ev.returncode}, resume exit {run.returncode}")
if ev.returncode != 0 or run.returncode != 0:
    failures.append(f"the unchanged copy does not load: {ev.stderr}{run.stderr}")

for name in ["nets.pt", "memories.bin", "config.toml", "meta.json", "latest"]:
    ck = fresh_copy()
    path = os.path.join(work, "checkpoints", "latest") if name == "latest" else os.path.join(ck, name)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x01
    open(path, "wb").write(data)
    ev, run, before = attempts()
    after = tree_digest(work)
    rel = os.path.relpath(path, work)
    for what, r in (("cfr-eval", ev), ("cfr-run --resume", run)):
        line = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        print(f"{rel}: {what}: exit {r.returncode}: {line[:160]}")
        if r.returncode != 2 or rel not in r.stderr:
            failures.append(f"{rel}: {what} exit {r.returncode}, message does not name it: {r.stderr.strip()}")
    if before != after:
        failures.append(f"{rel}: the refused resume changed the run directory")

print("FAIL:\n  " + "\n  ".join(failures) if failures else "PASS: every flipped file refused by name, nothing changed")
sys.exit(1 if failures else 0)
