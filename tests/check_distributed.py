#!/usr/bin/env python3
"""Distributed cfr-run (mpirun) checks.

  check_distributed.py same   CFR_RUN CONFIG WORK NP [--set k=v]...
      a single-process run and an mpirun -np NP run give identical digests, nodes and losses
  check_distributed.py failure CFR_RUN CONFIG WORK NP --mode kill|stop [--set k=v]...
      a traversal rank is SIGKILLed (or SIGSTOPped: it stops answering) mid-run: the job must
      end within a bounded time with a message naming the rank; the run is then resumed from its
      last checkpoint with one rank fewer and must equal an uninterrupted single-process run.
  check_distributed.py resume CFR_RUN CONFIG WORK NP --stop-after K [--set k=v]...
      a single-process run stopped after iteration K (run.max_iterations = K), resumed with
      mpirun -np NP to the end, must equal an uninterrupted single-process run.
  check_distributed.py malformed CFR_RUN CONFIG WORK 2 --bad-rank EXE --bad-mode MODE --widths W,T
                       --code C --expect REGEX [--keep-going] [--set k=v]...
      the learner (mpirun -np 1 CFR_RUN ...) beside a rank that sends malformed messages
      (mpirun ... : -np 1 EXE MODE W T, tests/apps/dist_bad_rank.cc): the job must end within
      60 s with exit C and a line of the learner's own (cfr-run (rank 0): ...) matching REGEX
      (--keep-going: mpirun is told not to end the job when a rank dies, for a rank that kills
      itself: the learner must notice).
  check_distributed.py league CFR_RUN CONFIG WORK 2 [--set k=v]...
      MMD's league checkpoint (mmd.opponents = ["checkpoint:league"], a path each rank reads from
      its own working directory: mpirun -np 1 --wdir A ... : -np 1 --wdir B ...) of other contents
      on rank 1 than on rank 0 (two runs of other seeds): the job must end within 60 s with exit 2
      and rank 1's line naming the entry, rank 1 and both checkpoints; the same contents at another
      path (a copy) must run (exit 0).

A killed or stopped rank must be named by the learner itself (apps/run/distributed.cc: "rank N sent
nothing for ..." or "rank N took nothing from the learner for ..."); a line of mpirun's that
happens to hold "rank N" does not count. (mpirun is told not to end the job when a rank dies, so
that the learner's own detection is what is tested.)
"""
import argparse, os, re, shutil, signal, subprocess, sys, time

MPIRUN = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def fail(msg):
    print(f"check_distributed: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def same_run(a, b):
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, os.path.join(here, "check_same_run.py"), a, b], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{a} and {b} differ:\n{r.stdout}{r.stderr}")


def parent_of(pid):
    """The parent's pid (0 when the process is gone)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[1])  # after "pid (comm) state"


def descends_from(pid, ancestor):
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def rank_pids(rank, job):
    """cfr-run processes of rank `rank` started by mpirun process `job` (never another job's: a
    second mpirun on the machine, e.g. a benchmark or another test run, has ranks of the same
    numbers)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if not open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0].endswith(b"cfr-run"):
                continue
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and descends_from(int(pid), job):
            out.append(int(pid))
    return out


def descendants(pid):
    """The live processes below `pid` (an mpirun's ranks run in process groups of their own)."""
    out = []
    for q in os.listdir("/proc"):
        if q.isdigit() and int(q) != pid and descends_from(int(q), pid):
            out.append(int(q))
    return out


def end_job(p):
    """Kills an mpirun job that did not end, ranks first (killed alone, mpirun would leave them
    running into the next test), and reaps it."""
    for pid in descendants(p.pid) + [p.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    p.communicate()


def run_job(cmd, timeout_message):
    """Runs an mpirun job to its end (at most 60 s, else fail(timeout_message)): (exit code, output)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        end_job(p)
        fail(timeout_message)
    return p.returncode, out


def malformed(a, sets):
    keep_going = ["--mca", "orte_abort_on_non_zero_status", "0"] if a.keep_going else []
    cmd = (MPIRUN + keep_going + ["-np", "1", a.cfr_run, a.config, "--run-dir", os.path.join(a.work, "run")] + sets
           + [":", "-np", "1", a.bad_rank, a.bad_mode] + a.widths.split(","))
    t0 = time.time()
    code, out = run_job(cmd, f"the job did not end within 60 s of rank 1 sending a malformed message ({a.bad_mode})")
    if code != a.code:
        fail(f"{a.bad_mode}: the job exited {code}, not {a.code}:\n{out[-3000:]}")
    own = re.compile(r"^cfr-run \(rank 0\): .*" + a.expect)
    named = [l for l in out.splitlines() if own.search(l)]
    if not named:
        fail(f"{a.bad_mode}: no line of the learner's matches /{a.expect}/:\n{out[-3000:]}")
    print(f"check_distributed: {a.bad_mode}: the job ended in {time.time() - t0:.1f} s (exit {code}): "
          f"{named[0].strip()}")


def league(a, sets):
    """Rank 1 loads another league checkpoint than rank 0: refused, naming the entry and rank 1."""
    r0, r1 = os.path.join(a.work, "rank0"), os.path.join(a.work, "rank1")
    for seed, where in ((1, r0), (2, r1)):  # the league checkpoints: two one-iteration runs of other seeds
        run([a.cfr_run, a.config, "--run-dir", os.path.join(where, "league")] + sets
            + ["--set", "run.max_iterations=1", "--set", f"run.seed={seed}"])
    league_sets = sets + ["--set", "run.max_iterations=1", "--set", "mmd.opponent_share=0.3",
                          "--set", 'mmd.opponents=["checkpoint:league"]']

    def job(run_dir):
        cmd = (MPIRUN + ["-np", "1", "--wdir", r0, a.cfr_run, a.config, "--run-dir", run_dir] + league_sets
               + [":", "-np", "1", "--wdir", r1, a.cfr_run, a.config, "--run-dir", run_dir] + league_sets)
        return run_job(cmd, f"the job ({run_dir}) did not end within 60 s")

    rc, out = job(os.path.join(a.work, "differs"))
    if rc != 2:
        fail(f"rank 1's league checkpoint differs from rank 0's: the job exited {rc}, not 2:\n{out[-3000:]}")
    own = re.compile(r"^cfr-run \(rank 1\): cfr-run: error: mmd\.opponents: 'checkpoint:league': rank 1 loaded other "
                     r"contents than rank 0, the learner: rank 1 read .*/rank1/league/checkpoints/iter-0+1 \(digest [0-9a-f]{32}\), "
                     r"rank 0 read .*/rank0/league/checkpoints/iter-0+1 \(digest [0-9a-f]{32}\)")
    named = [l for l in out.splitlines() if own.search(l)]
    if not named:
        fail(f"no line of rank 1's names the league checkpoint and rank 1 (/{own.pattern}/):\n{out[-3000:]}")
    print(f"check_distributed: league: other contents on rank 1: exit {rc}: {named[0].strip()}")
    # The same checkpoint at another path (rank 1's copy): the same contents, the run goes on.
    subprocess.run(["rm", "-rf", os.path.join(r1, "league")], check=True)
    shutil.copytree(os.path.join(r0, "league"), os.path.join(r1, "league"), symlinks=True)
    rc, out = job(os.path.join(a.work, "same"))
    if rc != 0 or "1 iteration(s) completed with 1 traversal rank(s)" not in out:
        fail(f"rank 1's copy of rank 0's league checkpoint: the job exited {rc}, not 0 with its iteration:\n{out[-3000:]}")
    print("check_distributed: league: a copy of the same checkpoint on rank 1: exit 0, 1 iteration")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["same", "failure", "resume", "malformed", "league"])
    ap.add_argument("cfr_run"); ap.add_argument("config"); ap.add_argument("work"); ap.add_argument("np", type=int)
    ap.add_argument("--mode", choices=["kill", "stop"], default="kill")
    ap.add_argument("--stop-after", type=int, default=0)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--bad-rank"); ap.add_argument("--bad-mode"); ap.add_argument("--widths")
    ap.add_argument("--code", type=int); ap.add_argument("--expect")
    ap.add_argument("--keep-going", action="store_true", help="mpirun does not end the job when a rank dies")
    a = ap.parse_args()
    subprocess.run(["rm", "-rf", a.work])
    os.makedirs(a.work)
    sets = sum((["--set", s] for s in a.set), [])
    if a.what == "malformed":
        malformed(a, sets)
        return
    if a.what == "league":
        league(a, sets)
        return
    single, dist = os.path.join(a.work, "single"), os.path.join(a.work, "distributed")
    run([a.cfr_run, a.config, "--run-dir", single] + sets)

    if a.what == "same":
        r = run(MPIRUN + ["-np", str(a.np), a.cfr_run, a.config, "--run-dir", dist] + sets)
        same_run(single, dist)
        print(f"check_distributed: 1 process and {a.np} processes ({a.np - 1} traversal ranks) give identical runs")
        return

    if a.what == "resume":
        if a.stop_after < 1:
            fail("resume needs --stop-after K (K >= 1)")
        total = len(open(os.path.join(single, "metrics.jsonl")).read().splitlines())
        if a.stop_after >= total:
            fail(f"--stop-after {a.stop_after}: the uninterrupted run has only {total} iterations")
        run([a.cfr_run, a.config, "--run-dir", dist] + sets + ["--set", f"run.max_iterations={a.stop_after}"])
        r = run(MPIRUN + ["-np", str(a.np), a.cfr_run, "--resume", dist, "--set", f"run.max_iterations={total}"])
        if f"resumed from the checkpoint of iteration {a.stop_after}: exact" not in r.stdout + r.stderr:
            fail(f"the resume with {a.np} processes did not say it was exact from iteration {a.stop_after}:\n"
                 f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        same_run(single, dist)
        print(f"check_distributed: 1 process to iteration {a.stop_after}, resumed with {a.np} processes "
              f"({a.np - 1} traversal ranks) to {total}: identical to the uninterrupted single-process run")
        return

    # Failure: start the job, wait for its second checkpoint, then kill or stop rank NP-1.
    # mpirun would end the whole job about 2 s after a rank dies, before the learner's timeout:
    # told not to, it leaves the learner to notice the dead rank and name it.
    keep_going = ["--mca", "orte_abort_on_non_zero_status", "0"]
    p = subprocess.Popen(MPIRUN + keep_going + ["-np", str(a.np), a.cfr_run, a.config, "--run-dir", dist] + sets,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    latest = os.path.join(dist, "checkpoints", "latest")
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if os.path.exists(latest) and open(latest).read().strip() >= "iter-000002":
            break
        time.sleep(0.02)
    if p.poll() is not None:
        fail(f"the job ended before the failure could be injected:\n{p.stdout.read()}")
    victim = a.np - 1
    pids = rank_pids(victim, p.pid)
    if not pids:
        fail(f"no cfr-run process of rank {victim} found")
    own = re.compile(rf"^cfr-run \(rank 0\): rank ([0-9]+, )*{victim}(, [0-9]+)* (sent nothing|took nothing from the learner) for ")
    named_by = [own]
    t0 = time.time()
    for pid in pids:
        os.kill(pid, signal.SIGKILL if a.mode == "kill" else signal.SIGSTOP)
    lines, took = [], None
    if a.mode == "stop":
        # The learner must notice the silent rank, name it and abort the job. A stopped process
        # cannot act on the termination signal mpirun sends, so it is killed once the learner
        # has spoken (as a cluster's scheduler would reap a hung process).
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        while time.time() - t0 < 90:
            if not sel.select(timeout=1):
                continue
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            if own.search(line):
                took = time.time() - t0
                break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        out, _ = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        end_job(p)
        fail(f"the job did not end within 90 s of rank {victim} being {'killed' if a.mode == 'kill' else 'stopped'}")
    out = "".join(lines) + out
    if took is None:
        took = time.time() - t0
    if p.returncode == 0:
        fail(f"the job exited 0 after rank {victim} failed:\n{out[-3000:]}")
    named = [l for l in out.splitlines() if any(r.search(l) for r in named_by)]
    if not named:
        fail(f"no message of {'cfr-run or mpirun' if a.mode == 'kill' else 'cfr-run'} names rank {victim}:\n{out[-3000:]}")
    print(f"check_distributed: rank {victim} {'killed' if a.mode == 'kill' else 'stopped'}: the job ended in {took:.1f} s "
          f"(exit {p.returncode}): {named[0].strip()}")
    # Resume with one process fewer; the finished run must equal the uninterrupted single run.
    run(MPIRUN + ["-np", str(a.np - 1), a.cfr_run, "--resume", dist])
    same_run(single, dist)
    print(f"check_distributed: resumed with {a.np - 1} processes; identical to the uninterrupted single-process run")


if __name__ == "__main__":
    main()
