#!/usr/bin/env python3
"""check_interrupt.py RUN_DIR -- CFR_RUN ARGS...: starts cfr-run, sends SIGINT once two
iterations are in metrics.jsonl, and passes iff cfr-run exits 0 within 60 s, the latest
checkpoint names a completed iteration, every metrics line is whole JSON, and --resume continues
to at least one more iteration."""
import json, os, signal, subprocess, sys, time

run_dir = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
metrics = os.path.join(run_dir, "metrics.jsonl")
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
t0 = time.time()
while time.time() - t0 < 120:
    if os.path.exists(metrics) and sum(1 for _ in open(metrics)) >= 2:
        break
    time.sleep(0.05)
p.send_signal(signal.SIGINT)
try:
    rc = p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    print("FAIL: cfr-run did not stop within 60 s of SIGINT")
    sys.exit(1)
lines = open(metrics).read().splitlines()
iters = [json.loads(l)["iteration"] for l in lines]  # raises on a torn line
latest = open(os.path.join(run_dir, "checkpoints", "latest")).read().strip()
print(f"exit {rc}; iterations in metrics {iters}; latest checkpoint {latest}")
if rc != 0 or latest != f"iter-{iters[-1]:06d}":
    print("FAIL")
    sys.exit(1)
cfr_run = cmd[0]
rc = subprocess.call([cfr_run, "--resume", run_dir, "--set", f"run.max_iterations={iters[-1] + 1}"], stdout=subprocess.DEVNULL)
after = [json.loads(l)["iteration"] for l in open(metrics).read().splitlines()]
print(f"resume exit {rc}; iterations now {after}")
ok = rc == 0 and after == iters + [iters[-1] + 1]
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
