#!/usr/bin/env python3
"""Games per second of a trained player's match from Python against the same match through
cfr-arena (docs/python.md "Trained players"), in alternating rounds: round r runs
cfr.match(P0, P1, games, seed) in this process, then `cfr-arena --bot0 P0 --bot1 P1 --games G
--seed S --json` as a child, so both see the same machine load. Per side: the report's
games_per_second (the match alone, as cfr-arena measures it) and the wall time (Python: the
cfr.match call, loading the checkpoint included; cfr-arena: the whole process). It also checks
that the two reports agree but for the timings. cfr-arena gets this process's OpenBLAS kernels
(OPENBLAS_CORETYPE = cfr.blas_core()); run Python with OPENBLAS_CORETYPE set on a CPU OpenBLAS
does not know (docs/python.md).

    OPENBLAS_CORETYPE=SkylakeX PYTHONPATH=build/python /usr/bin/python3 bench/python_match.py --rounds 5
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import cfr

TIMING = {"seconds", "games_per_second"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p0", default="checkpoint:models/lost-cities-league")
    ap.add_argument("--p1", default="heuristic_balanced")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--arena", default=str(pathlib.Path(cfr.__file__).parent.parent / "bin" / "cfr-arena"))
    a = ap.parse_args()
    env = dict(os.environ)
    if cfr.blas_core():
        env["OPENBLAS_CORETYPE"] = cfr.blas_core()
    rows = {"cfr.match": [], "cfr-arena": []}
    for _ in range(a.rounds):
        start = time.perf_counter()
        mine = cfr.match(a.p0, a.p1, games=a.games, seed=a.seed)
        rows["cfr.match"].append((mine["games_per_second"], time.perf_counter() - start))
        start = time.perf_counter()
        out = subprocess.run([a.arena, "--bot0", a.p0, "--bot1", a.p1, "--games", str(a.games), "--seed", str(a.seed), "--json"],
                             capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            sys.exit(f"cfr-arena exited {out.returncode}: {out.stderr}")
        theirs = json.loads(out.stdout)
        rows["cfr-arena"].append((theirs["games_per_second"], wall))
        same = {k: v for k, v in mine.items() if k not in TIMING} == {k: v for k, v in theirs.items() if k not in TIMING}
        if not same:
            sys.exit("the reports differ: " + json.dumps(mine) + " " + json.dumps(theirs))
    print(f"{a.p0} vs {a.p1}, {a.games} games, seed {a.seed}, {a.rounds} alternating rounds; OpenBLAS kernels "
          f"{cfr.blas_core() or '(none)'}; load average {os.getloadavg()[0]:.1f}; reports equal but for the timings")
    print("| side | games/s in the report, median (min–max) | wall seconds, median (min–max) |")
    print("| --- | ---: | ---: |")
    for side, r in rows.items():
        g, w = [x[0] for x in r], [x[1] for x in r]
        print(f"| {side} | {statistics.median(g):,.0f} ({min(g):,.0f}–{max(g):,.0f}) | "
              f"{statistics.median(w):.2f} ({min(w):.2f}–{max(w):.2f}) |")


if __name__ == "__main__":
    main()
