#!/usr/bin/env python3
"""check_data_parallel.py CFR_RUN CONFIG WORK NP LEARNERS [--rtol R] [--atol A] [--trains-before-samples]
                         [--silent-learner] [--no-weights] [--set k=v]...

Data-parallel learners (distributed.learners, docs/distributed.md "Data-parallel learners"): a
single-process run and an mpirun -np NP run with distributed.learners = LEARNERS, same config and
seed, must agree:
  - both exit 0, and every line of the distributed run says "learners": LEARNERS (the path ran);
  - iteration 1's sample digest is the same (its batches are the same samples: nothing trained yet;
    not with --trains-before-samples: ESCHER's value net and alternating updates train within
    iteration 1 before samples that read them);
  - every iteration's losses (advantage nets, strategy net, ESCHER's value net; MMD's policy and
    value nets and the policy loss's parts) agree within |a − b| ≤ atol + rtol·|a|, a being one
    learner's (the learners' gradient sums round differently from one learner's whole-batch
    gradient, nothing more);
  - so do the exploitabilities of the evaluations (and MMD's exact values against its league),
    and, where /usr/bin/python3 has torch (and
    without --no-weights), every tensor of the last checkpoint's nets.pt (weights and optimiser
    state), within atol + rtol·max|a| per tensor.
Prints the largest relative loss difference and the largest weight difference it saw.

With --silent-learner the distributed run's learner rank NP−1 is stopped (SIGSTOP) during the
training of its third iteration: the job must end within 60 s with exit 5 and rank 0's line naming
that learner rank alone ("learner rank N is silent: step ...'s gradient sum ..." or "... took no
rows ..."); the run is then resumed from its last checkpoint with mpirun -np NP−1 and
distributed.learners = LEARNERS−1, and the whole run is compared with the single-process run as
above (rank 0's checkpoint is the whole run: resuming on any number of learners).
"""
import argparse, json, os, re, shutil, signal, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_distributed import end_job, rank_pids  # noqa: E402  (a rank of this test's own mpirun)

MPIRUN = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def fail(msg):
    print(f"check_data_parallel: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def metrics(d):
    with open(f"{d}/metrics.jsonl") as f:
        return [json.loads(line) for line in f]


def numbers(line):
    """The losses and evaluations of a metrics line, by name: Deep CFR's and ESCHER's losses, MMD's
    (policy and value, and the policy loss's parts), the exploitabilities and MMD's exact values
    against its league."""
    out = {}

    def flat(name, v):
        if isinstance(v, bool):
            return
        if isinstance(v, (int, float)):
            out[name] = v
        elif isinstance(v, list):
            for i, x in enumerate(v):
                flat(f"{name}[{i}]", x)
        elif isinstance(v, dict):
            for k, x in v.items():
                flat(f"{name}.{k}", x)

    for key in ("loss_advantage", "loss_strategy", "loss_policy", "loss_value", "exploitability", "policy_gradient",
                "league_exact"):
        if key in line:
            flat(key, line[key])
    if isinstance(line.get("value"), dict):
        out["value.loss"] = line["value"]["loss"]
    return out


def weights(run_dir):
    """Every tensor of the latest checkpoint's nets.pt (weights and optimiser states) by name, or
    None without torch."""
    try:
        import torch
    except ImportError:
        return None
    with open(os.path.join(run_dir, "checkpoints", "latest")) as f:
        name = f.read().strip()
    m = torch.jit.load(os.path.join(run_dir, "checkpoints", name, "nets.pt"), map_location="cpu")
    return {k: t.detach().double() for k, t in m.named_parameters()}


def running(pid):
    """Whether `pid` is alive (not gone, not a zombie)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def silent_learner(a, dp, sets):
    victim = a.np - 1
    if a.learners != a.np or a.np < 3:
        fail("--silent-learner stops learner rank NP-1: it needs LEARNERS = NP >= 3")
    keep_going = ["--mca", "orte_abort_on_non_zero_status", "0"]  # the learner, not mpirun, must notice
    p = subprocess.Popen(MPIRUN + keep_going + ["-np", str(a.np), a.cfr_run, a.config, "--run-dir", dp] + sets +
                         ["--set", f"distributed.learners={a.learners}"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    latest = os.path.join(dp, "checkpoints", "latest")
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if os.path.exists(latest) and open(latest).read().strip() >= "iter-000002":
            break
        time.sleep(0.02)
    time.sleep(1.0)  # into iteration 3's training (the test's settings make training last seconds)
    if p.poll() is not None:
        fail(f"the job ended before the learner rank could be stopped:\n{p.stdout.read()[-3000:]}")
    pids = rank_pids(victim, p.pid)
    if not pids:
        fail(f"no cfr-run process of rank {victim} found")
    learner = rank_pids(0, p.pid)
    t0 = time.time()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    own = re.compile(rf"^cfr-run \(rank 0\): learner rank {victim} (is silent|took no rows)")
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    lines, took = [], None
    while time.time() - t0 < 60 and took is None:
        if not sel.select(timeout=1):
            continue
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
        if own.search(line):
            took = time.time() - t0
    # Rank 0 ends the job with its exit code (5) once it has named the rank: the stopped rank is
    # killed only after rank 0 has exited, or mpirun could report that kill (137) first.
    while took is not None and time.time() - t0 < 60 and any(running(q) for q in learner):
        time.sleep(0.05)
    for pid in pids:  # a stopped process cannot act on mpirun's termination: reaped as a scheduler would
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        end_job(p)
        fail(f"the job did not end within 60 s of learner rank {victim} being stopped")
    out = "".join(lines) + out
    if took is None:
        fail(f"rank 0 did not name learner rank {victim} within 60 s:\n{out[-3000:]}")
    if p.returncode != 5:
        fail(f"the job exited {p.returncode}, not 5, after learner rank {victim} went silent:\n{out[-3000:]}")
    named = next(line for line in lines if own.search(line)).strip()
    print(f"check_data_parallel: learner rank {victim} stopped; named by rank 0 after {took:.1f} s: {named}")
    r = run(MPIRUN + ["-np", str(a.np - 1), a.cfr_run, "--resume", dp, "--set", f"distributed.learners={a.learners - 1}"])
    if "resumed from the checkpoint of iteration" not in r.stdout + r.stderr:
        fail(f"the resume did not say where it resumed from:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    print(f"check_data_parallel: resumed with {a.np - 1} processes and {a.learners - 1} learners")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cfr_run"); ap.add_argument("config"); ap.add_argument("work")
    ap.add_argument("np", type=int); ap.add_argument("learners", type=int)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--trains-before-samples", action="store_true")
    ap.add_argument("--silent-learner", action="store_true")
    ap.add_argument("--no-weights", action="store_true")
    ap.add_argument("--set", action="append", default=[])
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    sets = [x for s in a.set for x in ("--set", s)]
    one, dp = os.path.join(a.work, "one"), os.path.join(a.work, "dp")
    run([a.cfr_run, a.config, "--run-dir", one] + sets)
    if a.silent_learner:
        silent_learner(a, dp, sets)
    else:
        run(MPIRUN + ["-np", str(a.np), a.cfr_run, a.config, "--run-dir", dp] + sets +
            ["--set", f"distributed.learners={a.learners}"])
    x, y = metrics(one), metrics(dp)
    if not x or len(x) != len(y):
        fail(f"{len(x)} iterations in one process, {len(y)} with {a.learners} learners")
    for line in y:
        if line.get("learners") not in (a.learners, a.learners - 1 if a.silent_learner else a.learners):
            fail(f"iteration {line.get('iteration')} of the distributed run says learners = {line.get('learners')}, "
                 f"not {a.learners}")
    if not a.trains_before_samples and x[0]["sample_digest"] != y[0]["sample_digest"]:
        fail(f"iteration 1's samples differ: {x[0]['sample_digest']} vs {y[0]['sample_digest']}")
    worst = (0.0, "")
    for p, q in zip(x, y):
        u, v = numbers(p), numbers(q)
        if not u or set(u) != set(v):
            fail(f"iteration {p['iteration']}: values {sorted(u)} vs {sorted(v)}")
        for k in u:
            d = abs(u[k] - v[k])
            rel = d / max(abs(u[k]), 1e-30)
            if rel > worst[0]:
                worst = (rel, f"{k} at iteration {p['iteration']}")
            if not d <= a.atol + a.rtol * abs(u[k]):
                fail(f"iteration {p['iteration']}: {k} = {u[k]!r} with one learner, {v[k]!r} with {a.learners} "
                     f"(tolerance {a.atol} + {a.rtol}·|value|)")
    print(f"check_data_parallel: {len(x)} iterations; largest relative difference {worst[0]:.3g} ({worst[1]})")
    if a.no_weights:
        return
    wa, wb = weights(one), weights(dp)
    if wa is None:
        print("check_data_parallel: no torch in python3: weights not compared (the losses were)")
        return
    if not wa or set(wa) != set(wb):
        fail(f"the checkpoints hold other tensors: {sorted(wa)[:5]} vs {sorted(wb)[:5]}")
    big = (0.0, "")
    for k in wa:
        if wa[k].shape != wb[k].shape:
            fail(f"{k}: shape {tuple(wa[k].shape)} vs {tuple(wb[k].shape)}")
        if wa[k].numel() == 0:
            continue
        d = (wa[k] - wb[k]).abs()
        bound = a.atol + a.rtol * wa[k].abs().max().item()
        if d.max().item() > big[0]:
            big = (d.max().item(), k)
        if d.max().item() > bound:
            fail(f"{k}: weights differ by up to {d.max().item():.3g} (bound {bound:.3g})")
    print(f"check_data_parallel: {len(wa)} tensors of nets.pt compared; largest difference {big[0]:.3g} ({big[1]})")


if __name__ == "__main__":
    main()
