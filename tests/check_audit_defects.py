#!/usr/bin/env python3
"""check_audit_defects.py CASE BIN_DIR SOURCE_DIR WORK_DIR: defects a read-only audit found, each a
case that fails without its fix. Prints "ok: CASE: ..." (exit 0) or "FAIL: ..." (exit 1).

  plot_injection    cfr-plot on a run whose metrics keys and directory name hold quotes, a newline
                    and gnuplot and shell commands: none of them runs (their marker files stay
                    absent), every string in the gnuplot script is quoted as gnuplot reads it, and
                    the plots are drawn (where gnuplot is installed)
  resume_no_latest  cfr-run --resume of a Kuhn run whose checkpoints/latest is gone but whose
                    iter-* checkpoint is there: exit 2 naming latest and that checkpoint, and
                    metrics.jsonl, the snapshots and parts/ stay as they were; with the name
                    written into latest, the resume continues from it
  metrics_bad_line  cfr-run --resume of a Kuhn run with an invalid line in the middle of
                    metrics.jsonl: exit 2 naming the file and the line, the run directory as it
                    was; a torn last line instead is dropped and the resume continues
  replay_gzip_cap   cfr-arena --replay of a 0.3 MB gzip file (257 members of 1 MiB of text each)
                    that expands past the 256 MiB limit: exit 2 naming the file and the limit
  snapshots_missing cfr-run --resume of a Kuhn run kept with checkpoint.keep_snapshots whose
                    snapshot of iteration 2 is gone: exit 2 naming that file, the run directory
                    as it was; with the file back, the resume continues
  export_tmp_kept   cfr-export MODEL RUNS/a beside a user's folder RUNS/a.tmp, then again with a
                    user's file a/manifest.json.tmp, and cfr-export RUNS/b.tmp RUNS/b (the source
                    named like the old temporary folder): exit 0 each time, the user's folder, file
                    and source kept as they were, no temporary folder left behind
  ladder_svg_names  cfr-ladder with a player spec holding & (heuristic_expert?wager_margin=1&...)
                    and --svg: the picture parses as XML and holds the name as given
  ladder_paths      cfr-ladder --json into a missing folder, --svg onto a directory: exit 2 naming
                    the flag and the path before any game (no "pair 1/" on stderr)
  sweep_names       bench/strength_sweep.sh with a variant name that is empty, '..', '.' or holds
                    '/', or an argument without '=': exit 2 naming the argument, a sentinel file in
                    OUT kept, nothing trained
  scaling_one_arg   bench/scaling.sh CONFIG (the documented one-argument form) with CONFIG relative
                    to the current directory and invalid: cfr-run names that file (read from the
                    directory the script ran from, not extra arguments), exit 2, and its mktemp
                    folder is removed (TMPDIR under WORK_DIR stays empty)
  search_strength_out  bench/search_strength.sh on a missing run with OUT an existing file: exit
                    non-zero, OUT as it was (not emptied), no OUT.cost or temporary file left
WORK_DIR is removed and made again (under the build tree)."""
import glob
import gzip
import json
import os
import shutil
import sys

case, bin_dir, src, work = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defect_case import DefectCase  # noqa: E402

harness = DefectCase(case, bin_dir)
fail, run, exe = harness.fail, harness.run, harness.exe


def plot_injection():
    gp_marker, shell_marker = os.path.join(work, "gnuplot_ran_it"), os.path.join(work, "shell_ran_it")
    # A run directory whose name ends the old `gnuplot '...'` shell quoting and runs a command (in
    # the current directory: WORK_DIR).
    run_dir = os.path.join(work, "bob's-run;touch shell_ran_it;'")
    os.makedirs(run_dir)
    bot = f"x' ; system 'touch {gp_marker}' ; #"
    net = f"adv\nsystem 'touch {gp_marker}'"
    with open(os.path.join(run_dir, "metrics.jsonl"), "w") as f:
        for it in (1, 2):
            f.write(json.dumps({"iteration": it, "losses": {net: 1.0 / it}, "evaluation": {bot: {"win_rate": 0.5}}}) + "\n")
    have_gnuplot = shutil.which("gnuplot") is not None
    # Into a plain folder (the metrics' strings reach gnuplot), then into RUN_DIR/plots (the
    # directory's name reaches the command line).
    for plots in (os.path.join(work, "plots"), os.path.join(run_dir, "plots")):
        out = ["--out", plots] if "bob" not in plots else []
        p = run([exe("cfr-plot"), run_dir] + out, want_rc=None, cwd=work)
        if os.path.exists(gp_marker) or os.path.exists(shell_marker):
            fail(f"a command from the metrics or the directory name ran: {sorted(os.listdir(work))}")
        if have_gnuplot and p.returncode != 0:
            fail(f"cfr-plot into {plots}: exit {p.returncode}, expected 0: {p.stdout}{p.stderr}")
        script = open(os.path.join(plots, "win_rates.gp")).read()
        title = "title 'vs x'' ; system ''touch " + gp_marker.replace("'", "''") + "'' ; #' noenhanced"
        if title not in script:
            fail(f"win_rates.gp does not hold the bot's title quoted for gnuplot ({title!r}):\n{script}")
        losses = open(os.path.join(plots, "losses.gp")).read()
        if "'adv system ''touch " not in losses or any(l.startswith("system") for l in losses.splitlines()):
            fail(f"losses.gp: the newline of the network's name was not replaced by a space:\n{losses}")
        if "set output '" + os.path.join(plots, "win_rates.png").replace("'", "''") + "'" not in script:
            fail(f"win_rates.gp does not quote the output path for gnuplot:\n{script}")
        if have_gnuplot:
            if "win_rates.png (1 curve)" not in p.stdout or not os.path.getsize(os.path.join(plots, "win_rates.png")):
                fail(f"cfr-plot drew no win rates: {p.stdout}{p.stderr}")
        elif p.returncode == 0 or "gnuplot failed" not in p.stderr:
            fail(f"without gnuplot: exit {p.returncode}, expected the error naming gnuplot: {p.stderr}")
    print(f"ok: plot_injection: exit {p.returncode} twice, no marker file, {len(script.splitlines())}-line scripts quoted, "
          f"gnuplot {'ran' if have_gnuplot else 'absent'}")


SMALL_KUHN = ["--set", "traversal.traversals_per_player=50", "--set", "optimization.advantage_updates_per_iteration=20",
              "--set", "optimization.strategy_updates_per_iteration=20", "--set", "evaluation.eval_every=0"]


def train_kuhn(run_dir, iterations, *extra):
    run([exe("cfr-run"), os.path.join(src, "configs", "kuhn.toml"), "--run-dir", run_dir, "--set",
         f"run.max_iterations={iterations}"] + SMALL_KUHN + list(extra))


def files_of(run_dir):
    """Every file under run_dir but the checkpoints: relative path -> bytes."""
    out = {}
    for root, _, names in os.walk(run_dir):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), run_dir)
            if not rel.startswith("checkpoints" + os.sep):
                out[rel] = open(os.path.join(root, n), "rb").read()
    return out


def refused_resume(run_dir, iterations, wants):
    """cfr-run --resume run_dir refused: exit 2, every string of `wants` in its message, and no file
    under run_dir (but the checkpoints) changed."""
    before = files_of(run_dir)
    p = run([exe("cfr-run"), "--resume", run_dir, "--set", f"run.max_iterations={iterations}"], want_rc=2)
    if not all(w in p.stderr for w in wants):
        fail(f"the refusal does not name {wants}: {p.stderr}")
    after = files_of(run_dir)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        fail(f"the refused resume changed {changed}")


def resume_no_latest():
    run_dir = os.path.join(work, "run")
    train_kuhn(run_dir, 3, "--set", "checkpoint.keep_snapshots=true")
    metrics = os.path.join(run_dir, "metrics.jsonl")
    latest = os.path.join(run_dir, "checkpoints", "latest")
    name = open(latest).read().strip()
    os.remove(latest)
    lines = open(metrics).read().count("\n")
    snaps = sorted(glob.glob(os.path.join(run_dir, "snapshots", "*.bin")))
    refused_resume(run_dir, 5, [f"{latest} is missing", os.path.join(run_dir, "checkpoints", name)])
    if lines != 3 or len(snaps) != 3:
        fail(f"the run had {lines} metrics lines and {len(snaps)} snapshots, expected 3 and 3")
    # The recovery the message tells.
    with open(latest, "w") as f:
        f.write(name + "\n")
    p = run([exe("cfr-run"), "--resume", run_dir, "--set", "run.max_iterations=5"])
    iters = [json.loads(l).get("iteration") for l in open(metrics)]
    if "resumed from the checkpoint of iteration 3" not in p.stdout + p.stderr or iters != [1, 2, 3, 4, 5]:
        fail(f"after writing {name} into latest: iterations {iters}: {p.stdout}{p.stderr}")
    print(f"ok: resume_no_latest: exit 2 naming latest and {name}; {lines} metrics lines and {len(snaps)} snapshots kept; "
          f"with latest written back, iterations {iters}")


def metrics_bad_line():
    run_dir = os.path.join(work, "run")
    train_kuhn(run_dir, 3)
    metrics = os.path.join(run_dir, "metrics.jsonl")
    good = open(metrics).read().splitlines(keepends=True)
    with open(metrics, "w") as f:
        f.write(good[0] + "{not json\n" + "".join(good[1:]))
    refused_resume(run_dir, 4, [f"{metrics}:2: invalid JSON"])
    # A torn last line (a crash mid-append: no newline) is dropped and the resume goes on.
    with open(metrics, "w") as f:
        f.write("".join(good) + '{"iteration": 4, "los')
    run([exe("cfr-run"), "--resume", run_dir, "--set", "run.max_iterations=4"])
    iters = [json.loads(l).get("iteration") for l in open(metrics)]
    if iters != [1, 2, 3, 4]:
        fail(f"after a torn last line: iterations {iters}")
    print(f"ok: metrics_bad_line: exit 2 naming metrics.jsonl:2, nothing changed; a torn last line dropped, iterations {iters}")


def replay_gzip_cap():
    bomb = os.path.join(work, "bomb.jsonl.gz")
    member = gzip.compress(b'{"deck": [' + b" " * ((1 << 20) - 10), compresslevel=9)
    with open(bomb, "wb") as f:
        for _ in range(257):
            f.write(member)
    size = os.path.getsize(bomb)
    p = run([exe("cfr-arena"), "--replay", bomb, "--quiet"], want_rc=2)
    if f"{bomb}: more than 256 MiB of text once decompressed" not in p.stderr:
        fail(f"the refusal does not name the file and the limit: {p.stderr}")
    print(f"ok: replay_gzip_cap: exit 2 naming the 256 MiB limit, for a {size}-byte gzip file of 257 MiB")


def snapshots_missing():
    run_dir = os.path.join(work, "run")
    train_kuhn(run_dir, 3, "--set", "checkpoint.keep_snapshots=true")
    snap = os.path.join(run_dir, "snapshots", "iter-000002.bin")
    kept = snap + ".kept"
    os.rename(snap, kept)
    refused_resume(run_dir, 4, [f"the advantage snapshot of iteration 2 ({snap}) is missing"])
    os.rename(kept, snap)
    p = run([exe("cfr-run"), "--resume", run_dir, "--set", "run.max_iterations=4"])
    snaps = sorted(os.path.basename(f) for f in glob.glob(os.path.join(run_dir, "snapshots", "*.bin")))
    if len(snaps) != 4:
        fail(f"after restoring the snapshot: {snaps}: {p.stdout}{p.stderr}")
    print(f"ok: snapshots_missing: exit 2 naming snapshots/iter-000002.bin, nothing changed; with it back, {len(snaps)} snapshots")


def export_tmp_kept():
    model = os.path.join(src, "models", "lost-cities-styles-avg")
    runs = os.path.join(work, "runs")
    user_dir = os.path.join(runs, "a.tmp")
    os.makedirs(user_dir)
    with open(os.path.join(user_dir, "keep"), "w") as f:
        f.write("the user's own file\n")
    out = os.path.join(runs, "a")
    run([exe("cfr-export"), model, out])
    keep = os.path.join(user_dir, "keep")
    if not os.path.isfile(keep) or open(keep).read() != "the user's own file\n":
        fail(f"{keep} was deleted or changed")
    if not os.path.isfile(os.path.join(out, "meta.json")):
        fail(f"no export in {out}: {sorted(os.listdir(out))}")
    # A user's FILE.tmp beside a file the tool writes atomically (manifest.json) is kept.
    user_file = os.path.join(out, "manifest.json.tmp")
    with open(user_file, "w") as f:
        f.write("mine\n")
    run([exe("cfr-export"), model, out])
    if not os.path.isfile(user_file) or open(user_file).read() != "mine\n":
        fail(f"{user_file} was removed or changed by the second export")
    # The source run named like the old temporary folder of its OUT.
    source = os.path.join(runs, "b.tmp")
    shutil.copytree(model, source)
    before = {n: open(os.path.join(source, n), "rb").read() for n in os.listdir(source)}
    run([exe("cfr-export"), source, os.path.join(runs, "b")])
    after = {n: open(os.path.join(source, n), "rb").read() for n in os.listdir(source)} if os.path.isdir(source) else {}
    if after != before:
        fail(f"the source {source} was changed or deleted: {sorted(after)}")
    left = sorted(n for n in os.listdir(runs) if n not in ("a", "a.tmp", "b", "b.tmp"))
    if left or sorted(os.listdir(out)) != ["config.toml", "manifest.json", "manifest.json.tmp", "meta.json", "nets.pt"]:
        fail(f"left behind: {left}, {sorted(os.listdir(out))}")
    print("ok: export_tmp_kept: exit 0 three times; a.tmp/keep, a/manifest.json.tmp and the source b.tmp kept, "
          "no temporary folder left")


LADDER_SPEC = "heuristic_expert?wager_margin=1&wager_min_cards=1"


def ladder_svg_names():
    import xml.etree.ElementTree as ET
    svg = os.path.join(work, "ladder.svg")
    run([exe("cfr-ladder"), LADDER_SPEC, "random", "--games", "2", "--anchor", LADDER_SPEC, "--svg", svg])
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail(f"{svg} is not XML ({e}):\n{open(svg).read()}")
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    if LADDER_SPEC not in texts or not any(t and t.endswith(f"anchor {LADDER_SPEC}") for t in texts):
        fail(f"the picture does not hold {LADDER_SPEC!r} as a label and in the title: {texts}")
    print(f"ok: ladder_svg_names: exit 0, the SVG parses, {len(texts)} labels, {LADDER_SPEC!r} among them and in the title")


def ladder_paths():
    missing = os.path.join(work, "nonexistent_dir", "x.json")
    for flag, path, says in (("--json", missing, f"--json {missing}: no folder {os.path.dirname(missing)}"),
                             ("--svg", work, f"--svg {work}: is a directory")):
        p = run([exe("cfr-ladder"), "random", "discard_only", "--games", "2", flag, path], want_rc=2)
        if says not in p.stderr:
            fail(f"{flag} {path}: the refusal does not say {says!r}: {p.stderr}")
        if "pair 1/" in p.stderr:
            fail(f"{flag} {path}: games were played before the refusal: {p.stderr}")
    print("ok: ladder_paths: exit 2 naming --json's missing folder and --svg's directory, before any game")


def sweep_names():
    out = os.path.join(work, "sweep")
    os.makedirs(out)
    sentinel = os.path.join(out, "keep")
    with open(sentinel, "w") as f:
        f.write("kept\n")
    # CONFIG missing: should anything train, it fails at once.
    env = dict(os.environ, OUT=out, CONFIG=os.path.join(work, "no_config.toml"), BIN=bin_dir)
    bad = ("=--set x=y", "..=", ".=", "a/b=--set x=y", "no_equals_sign")
    for arg in bad:
        p = run([os.path.join(src, "bench", "strength_sweep.sh"), "baseline=", arg], want_rc=2, env=env)
        if f"'{arg}'" not in p.stderr or "cfr-run" in p.stderr or p.stdout:
            fail(f"{arg!r}: the refusal does not name the argument, or something ran: {p.stdout}{p.stderr}")
        if sorted(os.listdir(out)) != ["keep"] or open(sentinel).read() != "kept\n":
            fail(f"{arg!r}: {out} now holds {sorted(os.listdir(out))}")
    print(f"ok: sweep_names: exit 2 naming each of {len(bad)} bad arguments, {out} kept as it was")


def scaling_one_arg():
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    with open(os.path.join(work, "bad.toml"), "w") as f:
        f.write("[run\n")
    env = dict(os.environ, TMPDIR=tmp, BIN=bin_dir)
    p = run([os.path.join(src, "bench", "scaling.sh"), "bad.toml"], want_rc=2, env=env, cwd=work)
    if os.path.join(work, "bad.toml") not in p.stderr or "not expected" in p.stderr:
        fail(f"cfr-run does not name {work}/bad.toml (or was given extra arguments): {p.stderr}")
    if os.listdir(tmp):
        fail(f"the mktemp folder was left behind: {os.listdir(tmp)}")
    print("ok: scaling_one_arg: exit 2 naming the config read from the current directory, no extra arguments, "
          "nothing left in TMPDIR")


def search_strength_out():
    out = os.path.join(work, "search.jsonl")
    with open(out, "w") as f:
        f.write("an earlier result\n")
    p = run([os.path.join(src, "bench", "search_strength.sh"), os.path.join(work, "no_run"), "2", out], want_rc=None, cwd=work,
            env=dict(os.environ, BIN=bin_dir))
    if p.returncode == 0:
        fail(f"exit 0 on a missing run: {p.stdout}{p.stderr}")
    if open(out).read() != "an earlier result\n":
        fail(f"{out} was emptied or changed before any match ran")
    if sorted(os.listdir(work)) != ["search.jsonl"]:
        fail(f"left behind in {work}: {sorted(os.listdir(work))}")
    print(f"ok: search_strength_out: exit {p.returncode}, {out} as it was, nothing left behind")


def main():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = {"plot_injection": plot_injection, "resume_no_latest": resume_no_latest, "metrics_bad_line": metrics_bad_line,
             "replay_gzip_cap": replay_gzip_cap, "snapshots_missing": snapshots_missing, "export_tmp_kept": export_tmp_kept,
             "ladder_svg_names": ladder_svg_names, "ladder_paths": ladder_paths, "sweep_names": sweep_names,
             "scaling_one_arg": scaling_one_arg, "search_strength_out": search_strength_out}
    if case not in cases:
        fail(f"unknown case; valid: {', '.join(cases)}")
    cases[case]()


main()
