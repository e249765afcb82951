#!/usr/bin/env python3
"""check_cli_defects.py CASE BIN_DIR SOURCE_DIR WORK_DIR: the command-line behaviours of issue 28
item 6 that need more than one command or a look at files. Prints "ok: CASE: ..." (exit 0) or
"FAIL: ..." (exit 1); "skip: ..." (exit 77, shown as skipped by CTest) when the machine cannot
run the case (disk_full: no private mount namespace or tmpfs).

  external_logs  external players' logs never land in the current directory: cfr-arena puts them
                 in $TMPDIR/cfr-player-logs-XXXXXX (mkdtemp: mode 0700, named on stderr), cfr-ladder beside --json
  no_eval        cfr-run with evaluation.games = 0 prints no "vs BOT" result and writes no
                 "evaluation" to metrics.jsonl (the default games do both: the control)
  export_keeps   cfr-export again onto an earlier export keeps a file the user added there
  eval_live      cfr-eval RUN_DIR while the run trains and rotates its checkpoints: every
                 evaluation succeeds and says its iteration; the iterations go up
  disk_full      cfr-run on a full disk (a 64 MiB tmpfs in a private mount namespace, filled)
                 while it saves the networks, then the memories: exit 2 naming the file and "No
                 space left on device", never an abort; the partial checkpoint is removed, `latest`
                 is untouched, and a resume once there is room continues from it
WORK_DIR is removed and made again (under the build tree)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

case, bin_dir, src, work = sys.argv[1:5]
SKIP = 77
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defect_case import DefectCase  # noqa: E402

harness = DefectCase(case, bin_dir)
fail, run, exe = harness.fail, harness.run, harness.exe


SMALL_KUHN = [os.path.join(src, "configs", "kuhn.toml"), "--set", "traversal.traversals_per_player=50",
              "--set", "optimization.advantage_updates_per_iteration=20", "--set", "optimization.strategy_updates_per_iteration=20"]


def external_logs():
    cwd, tmp, ladder_dir = (os.path.join(work, d) for d in ("cwd", "tmp", "ladder"))
    for d in (cwd, tmp, ladder_dir):
        os.makedirs(d)
    env = dict(os.environ, TMPDIR=tmp)
    player = f"external:python3 {src}/scripts/players/random_player.py"
    p = run([exe("cfr-arena"), "--bot0", player, "--bot1", "random", "--games", "2"], cwd=cwd, env=env)
    if glob.glob(os.path.join(cwd, "*")):
        fail(f"cfr-arena wrote into the current directory: {os.listdir(cwd)}")
    logs = glob.glob(os.path.join(tmp, "cfr-player-logs-*", "external-*.log"))
    if len(logs) != 1 or logs[0] not in p.stderr:
        fail(f"cfr-arena: logs {logs}, stderr does not name the one log: {p.stderr}")
    if os.stat(os.path.dirname(logs[0])).st_mode & 0o777 != 0o700:
        fail(f"cfr-arena's log folder has mode {oct(os.stat(os.path.dirname(logs[0])).st_mode & 0o777)}, not 0700")
    p = run([exe("cfr-ladder"), "random", player, "--games", "2", "--json", os.path.join(ladder_dir, "ladder.json")],
            cwd=cwd, env=env)
    beside = glob.glob(os.path.join(ladder_dir, "external-*.log"))
    if glob.glob(os.path.join(cwd, "*")) or len(beside) != 1 or "started" not in open(beside[0]).read():
        fail(f"cfr-ladder: logs beside --json {beside}, current directory {os.listdir(cwd)}: {p.stderr}")
    print(f"ok: external_logs: cfr-arena's log {os.path.relpath(logs[0], work)}, cfr-ladder's {os.path.relpath(beside[0], work)}")


def no_eval():
    smoke = [exe("cfr-run"), os.path.join(src, "configs", "smoke.toml"), "--set", "run.max_iterations=1"]
    both = lambda p: p.stdout + p.stderr
    with_games = both(run(smoke + ["--run-dir", os.path.join(work, "with_games")]))
    none = both(run(smoke + ["--set", "evaluation.games=0", "--run-dir", os.path.join(work, "no_games")]))
    if " vs random " not in with_games:
        fail(f"the control (evaluation.games = 4) printed no evaluation: {with_games}")
    if " vs " in none or "iteration(s) completed" not in none:
        fail(f"evaluation.games = 0 printed an evaluation (or did not finish): {none}")
    for name, want in (("with_games", True), ("no_games", False)):
        lines = [json.loads(x) for x in open(os.path.join(work, name, "metrics.jsonl"))]
        if any(("evaluation" in x) != want for x in lines):
            fail(f"{name}/metrics.jsonl: 'evaluation' {'missing' if want else 'written'}: {lines}")
    print("ok: no_eval: no 'vs random' line and no evaluation in metrics.jsonl with evaluation.games = 0 (the control has both)")


def export_keeps():
    run_dir = os.path.join(os.path.dirname(work), "run_smoke")
    out = os.path.join(work, "model")
    help_text = run([exe("cfr-export"), "--help"]).stdout
    if "any other file in it is kept" not in help_text:
        fail(f"--help does not say that other files are kept: {help_text}")
    run([exe("cfr-export"), run_dir, out])
    mine = os.path.join(out, "NOTES.md")
    with open(mine, "w") as f:
        f.write("my notes\n")
    before = os.path.getmtime(os.path.join(out, "meta.json"))
    time.sleep(0.05)
    p = run([exe("cfr-export"), run_dir, out])
    if not os.path.exists(mine) or open(mine).read() != "my notes\n":
        fail(f"the user's file was deleted or changed by the second export: {os.listdir(out)}")
    if sorted(os.listdir(out)) != ["NOTES.md", "config.toml", "manifest.json", "meta.json", "nets.pt"]:
        fail(f"the model folder holds {sorted(os.listdir(out))}")
    if os.path.getmtime(os.path.join(out, "meta.json")) == before:
        fail("the second export did not rewrite meta.json")
    run([exe("cfr-eval"), out, "--opponent", "random", "--games", "2"])
    print(f"ok: export_keeps: NOTES.md kept, the model's files replaced and it loads: {p.stdout.strip()}")


def eval_live():
    run_dir = os.path.join(work, "run")
    cmd = [exe("cfr-run"), *SMALL_KUHN, "--set", "run.max_iterations=100000", "--set", "traversal.traversals_per_player=20",
           "--set", "optimization.advantage_updates_per_iteration=2", "--set", "optimization.strategy_updates_per_iteration=2",
           "--set", "evaluation.eval_every=0", "--run-dir", run_dir]
    trainer = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(run_dir, "checkpoints", "latest")):
            if time.time() > deadline or trainer.poll() is not None:
                fail(f"no first checkpoint (cfr-run exit {trainer.poll()})")
            time.sleep(0.1)
        seen = []
        for _ in range(30):
            p = run([exe("cfr-eval"), run_dir, "--json"], want_rc=None)
            if p.returncode != 0:
                fail(f"cfr-eval while the run trains: exit {p.returncode} after {len(seen)} good ones: {p.stderr}")
            seen.append(json.loads(p.stdout.strip().splitlines()[-1])["iteration"])
            if trainer.poll() is not None:
                fail(f"cfr-run stopped early (exit {trainer.returncode})")
    finally:
        if trainer.poll() is None:
            trainer.send_signal(signal.SIGTERM)
            trainer.wait(timeout=120)
    if seen != sorted(seen) or len(set(seen)) < 5:
        fail(f"iterations evaluated {seen}: not rising, or the run did not rotate its checkpoints during the evaluations")
    print(f"ok: eval_live: 30 evaluations during training, iterations {seen[0]}..{seen[-1]} ({len(set(seen))} checkpoints)")


def fill(path):
    """Fills the filesystem holding path with one file; returns it."""
    filler = os.path.join(path, "filler")
    with open(filler, "wb", buffering=0) as f:
        for chunk in (1 << 20, 4096):
            try:
                while True:
                    f.write(b"\0" * chunk)
                    f.flush()
            except OSError:
                pass
    return filler


def leave_free(filler, free):
    os.truncate(filler, max(0, os.path.getsize(filler) - free))


def disk_full():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: disk_full: needs root and unshare (a private mount namespace for a tmpfs)")
        sys.exit(SKIP)
    os.makedirs(os.path.join(work, "mnt"))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, __file__, "disk_full_inner", bin_dir, src,
                        work], timeout=900)
    sys.exit(p.returncode)


def disk_full_inner():
    mnt = os.path.join(work, "mnt")
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt], capture_output=True, text=True)
    if m.returncode != 0:
        print(f"skip: disk_full: cannot mount a tmpfs here: {m.stderr.strip()}")
        sys.exit(SKIP)
    run_dir = os.path.join(mnt, "run")
    big = [*SMALL_KUHN, "--set", "network.hidden_size=256", "--set", "checkpoint.include_memories=true",
           "--set", "traversal.traversals_per_player=400"]
    run([exe("cfr-run"), *big, "--set", "run.max_iterations=2", "--run-dir", run_dir])
    ck = os.path.join(run_dir, "checkpoints", "iter-000002")
    nets, memories = (os.path.getsize(os.path.join(ck, f)) for f in ("nets.pt", "memories.bin"))
    if nets < (1 << 20) or memories < (256 << 10):
        fail(f"the checkpoint is too small to place the full disk: nets.pt {nets}, memories.bin {memories} bytes")
    resume = [exe("cfr-run"), "--resume", run_dir, "--set", "run.max_iterations=3"]
    results = []
    # Room for the small files (metrics, log, parts/) but not for nets.pt; then for nets.pt and
    # config.toml but not for the memories (larger at iteration 3 than at 2).
    for what, free, regex in (("nets.pt", nets // 2, "nets.pt"), ("memories.bin", nets + memories // 2, "memories.bin")):
        filler = fill(mnt)
        leave_free(filler, free)
        p = run(resume, want_rc=None)
        err = p.stderr
        if p.returncode != 2 or f"{regex}" not in err or "No space left on device" not in err or "internal error" in err:
            fail(f"a full disk while writing {what}: exit {p.returncode} (want 2 naming {what} and 'No space left on "
                 f"device'):\n{p.stdout[-2000:]}{err[-3000:]}")
        line = [x for x in err.splitlines() if "No space left" in x][0]
        if os.listdir(os.path.join(run_dir, "checkpoints")) != ["iter-000002", "latest"] and \
                sorted(os.listdir(os.path.join(run_dir, "checkpoints"))) != ["iter-000002", "latest"]:
            fail(f"after the failed write of {what}: checkpoints/ holds {os.listdir(os.path.join(run_dir, 'checkpoints'))}")
        if open(os.path.join(run_dir, "checkpoints", "latest")).read().strip() != "iter-000002":
            fail("latest no longer names iter-000002")
        os.remove(filler)
        results.append(line.strip())
    p = run(resume)
    out = p.stdout + p.stderr
    if "resumed from the checkpoint of iteration 2" not in out or "3 iteration(s) completed" not in out:
        fail(f"the resume with room again: {out[-2000:]}")
    if open(os.path.join(run_dir, "checkpoints", "latest")).read().strip() != "iter-000003":
        fail("after the resume, latest does not name iter-000003")
    subprocess.run(["umount", mnt])
    print(f"ok: disk_full: {results[0]} | {results[1]} | exit 2 both times; resumed from iteration 2 to 3")


if case != "disk_full_inner":
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
{"external_logs": external_logs, "no_eval": no_eval, "export_keeps": export_keeps, "eval_live": eval_live,
 "disk_full": disk_full, "disk_full_inner": disk_full_inner}[case]()
