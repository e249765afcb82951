#!/usr/bin/env python3
"""check_stop.py MODE CFR_RUN CFR_EVAL RUN_DIR -- CONFIG [--set k=v]...: SIGTERM and SIGINT at Lost
Cities size are acted on wherever the run is, not only during traversals.

Each mode first trains iteration 1 quickly (its checkpoint is the last completed iteration), then:
  training    resumes with very long training steps (--allow-training-changes) and sends SIGTERM
              during iteration 2's training;
  evaluation  sends SIGTERM during iteration 2's evaluation (100,000 games per opponent);
  second      stops the process during iteration 2's evaluation, queues SIGINT and SIGTERM, and
              lets it go on: the second one handled must end it at once with 128 + its number.
Passes iff the process exits with the expected code within STOP_LIMIT seconds of the signal, says
where it was interrupted, `latest` still names iteration 1, cfr-eval loads that checkpoint (its
checksums verified), and a resume continues from it."""
import os, signal, subprocess, sys, threading, time

STOP_LIMIT = 15.0  # seconds; measured here: 0.2 s (training and evaluation), the bound allows a loaded CI


def fail(msg):
    print(f"check_stop: FAIL: {msg}")
    sys.exit(1)


mode, cfr_run, cfr_eval, run_dir = sys.argv[1:5]
base = sys.argv[sys.argv.index("--") + 1:]
short_training = ["--set", "optimization.advantage_updates_per_iteration=20",
                  "--set", "optimization.strategy_updates_per_iteration=20"]
quick = ["--set", "run.max_iterations=1", "--set", "evaluation.eval_every=2", *short_training]
rc = subprocess.call([cfr_run, *base, "--run-dir", run_dir, *quick], stdout=subprocess.DEVNULL)
if rc != 0:
    fail(f"the first iteration exited {rc}")

if mode == "training":
    cmd = [cfr_run, "--resume", run_dir, "--allow-training-changes", "--set", "run.max_iterations=3",
           "--set", "optimization.advantage_updates_per_iteration=1000000",
           "--set", "optimization.strategy_updates_per_iteration=1000000"]
    step, want_rc, signals = "training", {0}, [signal.SIGTERM]
else:
    # One update per network: iteration 2's training takes a fraction of a second even on a loaded
    # machine (20 took 3-6 s, and the signal landed in training under ctest -j2), so the signal
    # below lands in the evaluation.
    cmd = [cfr_run, "--resume", run_dir, "--allow-training-changes", "--set", "run.max_iterations=3",
           "--set", "evaluation.games=100000", "--set", "optimization.advantage_updates_per_iteration=1",
           "--set", "optimization.strategy_updates_per_iteration=1"]
    step = "evaluation"
    # The kernel picks which of the two pending signals is handled first.
    want_rc = {0} if mode == "evaluation" else {128 + signal.SIGINT, 128 + signal.SIGTERM}
    signals = [signal.SIGTERM] if mode == "evaluation" else [signal.SIGINT, signal.SIGTERM]

p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out = []
reader = threading.Thread(target=lambda: out.extend(p.stdout), daemon=True)
reader.start()
# Iteration 2's traversals and (in the evaluation modes) its short training take well under a
# second at these sizes; the step under test then runs for minutes.
time.sleep(6.0)
if p.poll() is not None:
    fail(f"cfr-run ended before the signal (exit {p.returncode}):\n{''.join(out)}")
t0 = time.time()
if len(signals) == 1:
    p.send_signal(signals[0])
else:  # both pending while the process is stopped: the second is seen while the first is handled
    p.send_signal(signal.SIGSTOP)
    for s in signals:
        p.send_signal(s)
    p.send_signal(signal.SIGCONT)
try:
    rc = p.wait(timeout=STOP_LIMIT)
except subprocess.TimeoutExpired:
    p.kill()
    fail(f"cfr-run did not exit within {STOP_LIMIT} s of the signal")
waited = time.time() - t0
reader.join(timeout=5)
text = "".join(out)
print(text)
print(f"exit {rc} {waited:.2f} s after the signal")
if rc not in want_rc:
    fail(f"exit code {rc}, expected one of {sorted(want_rc)}")
if mode == "second":
    if "second signal: exiting now" not in text:
        fail("no 'second signal' message")
elif f"interrupted during iteration 2's {step}; the last checkpoint is iteration 1" not in text:
    fail(f"no 'interrupted during iteration 2's {step}' message")
latest = open(os.path.join(run_dir, "checkpoints", "latest")).read().strip()
if latest != "iter-000001":
    fail(f"latest names {latest}, expected iter-000001")
r = subprocess.run([cfr_eval, run_dir, "--games", "2", "--json"], capture_output=True, text=True)
if r.returncode != 0 or '"games":2' not in r.stdout:
    fail(f"cfr-eval on the latest checkpoint: exit {r.returncode}: {r.stdout}{r.stderr}")
# With the first part's training keys again (the interrupted part's changes were never checkpointed).
r = subprocess.run([cfr_run, "--resume", run_dir, "--set", "run.max_iterations=2", "--set", "evaluation.games=2",
                    *short_training], capture_output=True, text=True)
if r.returncode != 0 or "resumed from the checkpoint of iteration 1" not in r.stdout or "iter    2/2" not in r.stdout:
    fail(f"resume after the stop: exit {r.returncode}: {r.stdout}{r.stderr}")
print("check_stop: PASS")
