#!/usr/bin/env python3
"""check_audit_defects.py CASE BIN_DIR SOURCE_DIR WORK_DIR: defects a read-only audit found, each a
case that fails without its fix. Prints "ok: CASE: ..." (exit 0) or "FAIL: ..." (exit 1).

  plot_injection    cfr-plot on a run whose metrics keys and directory name hold quotes, a newline
                    and gnuplot and shell commands: none of them runs (their marker files stay
                    absent), every string in the gnuplot script is quoted as gnuplot reads it, and
                    the plots are drawn (where gnuplot is installed)
WORK_DIR is removed and made again (under the build tree)."""
import json
import os
import shutil
import subprocess
import sys

case, bin_dir, src, work = sys.argv[1:5]


def fail(msg):
    print(f"FAIL: {case}: {msg}")
    sys.exit(1)


def run(cmd, want_rc=0, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)
    if want_rc is not None and p.returncode != want_rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {want_rc}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p


def exe(name):
    return os.path.join(bin_dir, name)


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


def main():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = {"plot_injection": plot_injection}
    if case not in cases:
        fail(f"unknown case; valid: {', '.join(cases)}")
    cases[case]()


main()
