#!/usr/bin/env python3
"""Crash and resume: SIGKILL cfr-run at random moments (traversal, training, checkpoint writing)
and check after every kill that the run directory stays readable: `latest` names a complete
checkpoint (meta.json parses, nets.pt and memories.bin exist), cfr-eval loads it, and every
metrics.jsonl line but possibly the last parses. Then --resume, until the run completes; the
final metrics.jsonl must hold iterations 1..N once each, every line whole, and (memories are
checkpointed, so resuming is exact) the same sample digests and losses as an uninterrupted run.
Exactly K SIGKILLs must land: each random moment is drawn within the work left after the last
checkpoint, shared among the kills still to come, and a run that ends before its kill fails.

  check_crash_resume.py CFR_RUN CFR_EVAL CONFIG WORK_DIR [--kills K] [--seed S] [--set k=v]...
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, time


def fail(msg):
    print(f"check_crash_resume: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def metrics(run_dir, allow_torn_last):
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        raw = f.read().decode()
    lines = raw.split("\n")
    torn = lines.pop()  # text after the last newline ('' when the file ends with one)
    out = []
    for i, line in enumerate(lines):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            fail(f"{path}:{i + 1}: torn or invalid line {line[:80]!r}")
    if torn and not allow_torn_last:
        fail(f"{path}: ends with a torn line {torn[:80]!r}")
    return out


def check_checkpoint(run_dir, cfr_eval):
    ck_dir = os.path.join(run_dir, "checkpoints")
    latest = os.path.join(ck_dir, "latest")
    if not os.path.exists(latest):
        return None
    name = open(latest).read().strip()
    ck = os.path.join(ck_dir, name)
    meta = json.load(open(os.path.join(ck, "meta.json")))
    for f in ["nets.pt"] + (["memories.bin"] if meta["memories"] else []):
        if not os.path.getsize(os.path.join(ck, f)):
            fail(f"{ck}/{f} is empty")
    r = subprocess.run([cfr_eval, run_dir, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"cfr-eval cannot load the newest checkpoint {ck}: {r.stderr.strip()}")
    return meta["iteration"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cfr_run"); ap.add_argument("cfr_eval"); ap.add_argument("config"); ap.add_argument("work")
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[])
    a = ap.parse_args()
    rng = random.Random(a.seed)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    sets = sum((["--set", s] for s in a.set + ["checkpoint.include_memories=true"]), [])
    ref, run = os.path.join(a.work, "reference"), os.path.join(a.work, "crashed")

    t0 = time.time()
    r = subprocess.run([a.cfr_run, a.config, "--run-dir", ref] + sets, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"reference run failed: {r.stderr}")
    ref_time = time.time() - t0
    want = metrics(ref, False)
    n = len(want)

    first = [a.cfr_run, a.config, "--run-dir", run] + sets
    kills, where, last = 0, [], None
    while True:
        # Killed before it wrote config.toml, the run left nothing to resume: start it again.
        cmd = [a.cfr_run, "--resume", run] if os.path.exists(os.path.join(run, "config.toml")) else first
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if kills < a.kills:
            if kills % 3 == 2:  # aim at checkpoint writing: kill as soon as a .tmp- directory shows
                deadline = time.time() + ref_time
                ck_dir = os.path.join(run, "checkpoints")
                while p.poll() is None and time.time() < deadline:
                    if os.path.isdir(ck_dir) and any(e.startswith(".tmp-") for e in os.listdir(ck_dir)):
                        break
                    time.sleep(0.0005)
                what = "checkpoint writing"
            else:
                # The uninterrupted run's time for the iterations after the last checkpoint, left
                # for this kill and the ones after it (a resumed run also pays its start-up again).
                left = ref_time * (n - (last or 0)) / n
                time.sleep(rng.uniform(0.1, max(0.2, left / (a.kills - kills + 1))))
                what = "random moment"
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait()
            if p.returncode != -signal.SIGKILL:
                fail(f"kill {kills + 1} of {a.kills} ({what}) did not land: the run exited {p.returncode} first: "
                     f"{p.stderr.read().strip()[-2000:]}")
            kills += 1
            last = check_checkpoint(run, a.cfr_eval)
            done = len(metrics(run, True))
            where.append(f"{what} (metrics {done} lines, checkpoint {last})")
            continue
        _, err = p.communicate()
        if p.returncode != 0:
            fail(f"{' '.join(cmd)} exited {p.returncode}: {err.strip()}")
        break

    got = metrics(run, False)
    its = [m["iteration"] for m in got]
    if its != list(range(1, n + 1)):
        fail(f"metrics iterations {its}, expected 1..{n}")
    for w, g in zip(want, got):
        for key in ("sample_digest", "nodes", "loss_advantage", "loss_strategy", "memory_size"):
            if w[key] != g[key]:
                fail(f"iteration {w['iteration']}: {key} {g[key]} after crashes, {w[key]} uninterrupted")
    if kills != a.kills:
        fail(f"{kills} SIGKILLs landed, {a.kills} requested")
    print(f"check_crash_resume: {kills} of {a.kills} SIGKILLs ({'; '.join(where)}); resumed to {n} iterations "
          f"identical to the uninterrupted run")


if __name__ == "__main__":
    main()
