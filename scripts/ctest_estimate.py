#!/usr/bin/env python3
"""Estimate a ctest run's wall time from measured test times (docs/ci.md, "Test time").

    scripts/ctest_estimate.py BUILD_DIR TIMES [-j 2] [--no-cost] [--exclude-names FILE]
                              [--set NAME=SECONDS] [--top N] [--show N] -- [ctest selection: -LE slow ...]

TIMES is a CTestCostData.txt (BUILD_DIR/Testing/Temporary/) or the output of a ctest run (its
"Test #N: NAME ....   Passed   X sec" lines). CMake 3.25 writes a cost line as "NAME RUNS COST"
but reads NAME back as the first word, so every name with spaces (every doctest case) comes back
as a garbage line "FIRSTWORD 0 X"; those (RUNS = 0) are skipped, and the real line (the last two
fields are RUNS and COST) is kept.

The tests and their properties come from `ctest --test-dir BUILD_DIR --show-only=json-v1` with
the selection given after `--`. The model of CTest's scheduler (CMake 3.25, -j N): fixture
setups and DEPENDS first (deepest dependency level first), inside a level by COST descending,
then in the order the tests were added; a RUN_SERIAL test runs alone; a RESOURCE_LOCK is held by
one test at a time. --no-cost ignores the COST properties: a fresh clone's first run before
tests/ci_schedule.cmake set them. A test without a measured time counts --default seconds.
Prints the summed test time, the simulated wall time and the N longest tests (--top).
"""
import argparse
import heapq
import json
import re
import subprocess
import sys


def read_times(path):
    times = {}
    text = open(path, encoding="utf-8", errors="replace").read()
    ran = re.findall(r"Test +#\d+: (.*?) \.{3,}.*?([\d.]+) sec", text)
    if ran:
        return {name: float(sec) for name, sec in ran}
    for line in text.splitlines():
        if line == "---":  # then the tests that failed last time
            break
        parts = line.rsplit(" ", 2)
        if len(parts) != 3:
            continue
        try:
            runs, cost = int(parts[1]), float(parts[2])
        except ValueError:
            continue
        if runs > 0:
            times[parts[0]] = cost
    return times


def main():
    argv = sys.argv[1:]
    selection = []
    if "--" in argv:
        i = argv.index("--")
        argv, selection = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("times")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--no-cost", action="store_true", help="ignore COST (the order of a fresh clone without it)")
    ap.add_argument("--exclude-names", help="a file of test names, one a line, left out")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=SECONDS", help="override a test's time")
    ap.add_argument("--default", type=float, default=0.5, help="seconds of a test without a measured time")
    ap.add_argument("--top", type=int, default=0, help="print the N longest tests")
    ap.add_argument("--show", type=int, default=0, help="print the N tests that end last")
    a = ap.parse_args(argv)

    times = read_times(a.times)
    for kv in a.set:
        name, sec = kv.rsplit("=", 1)
        times[name] = float(sec)
    excluded = set()
    if a.exclude_names:
        excluded = {l.rstrip("\n") for l in open(a.exclude_names, encoding="utf-8") if l.strip()}
    listing = subprocess.run(["ctest", "--test-dir", a.build, "--show-only=json-v1", *selection],
                             capture_output=True, text=True, check=True)
    tests = []
    for index, t in enumerate(json.loads(listing.stdout)["tests"]):
        if t["name"] in excluded:
            continue
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests.append({"index": index, "name": t["name"], "props": props})
    by_name = {t["name"]: t for t in tests}
    setups = {}
    for t in tests:
        for f in t["props"].get("FIXTURES_SETUP", []):
            setups.setdefault(f, []).append(t["name"])
    unmeasured = 0
    for t in tests:
        deps = {d for d in t["props"].get("DEPENDS", []) if d in by_name}
        for f in t["props"].get("FIXTURES_REQUIRED", []):
            deps |= set(setups.get(f, []))
        deps.discard(t["name"])
        t["deps"] = deps
        unmeasured += t["name"] not in times
        t["seconds"] = times.get(t["name"], a.default)
        t["cost"] = 0.0 if a.no_cost else float(t["props"].get("COST", 0))

    levels = [set(by_name)]
    while levels[-1]:
        levels.append(set().union(*(by_name[n]["deps"] for n in levels[-1])))
    order, placed = [], set()
    for level in reversed(levels):
        for n in sorted(sorted(level, key=lambda n: by_name[n]["index"]), key=lambda n: -by_name[n]["cost"]):
            if n not in placed:
                order.append(n)
                placed.add(n)

    now, running, done, locks, serial, start = 0.0, [], set(), set(), False, {}
    pending = order
    while pending or running:
        while not serial and len(running) < a.j:
            ready = None
            for n in pending:
                t = by_name[n]
                if not t["deps"] <= done or (t["props"].get("RUN_SERIAL") and running):
                    continue
                if set(t["props"].get("RESOURCE_LOCK", [])) & locks:
                    continue
                ready = n
                break
            if ready is None:
                break
            t = by_name[ready]
            pending.remove(ready)
            locks |= set(t["props"].get("RESOURCE_LOCK", []))
            serial = bool(t["props"].get("RUN_SERIAL"))
            start[ready] = now
            heapq.heappush(running, (now + t["seconds"], ready))
        if not running:
            sys.exit(f"ctest_estimate: no test can start (dependencies outside the selection?): {pending[:3]}")
        now, n = heapq.heappop(running)
        done.add(n)
        locks -= set(by_name[n]["props"].get("RESOURCE_LOCK", []))
        if by_name[n]["props"].get("RUN_SERIAL"):
            serial = False

    total = sum(t["seconds"] for t in tests)
    print(f"{len(tests)} tests ({unmeasured} without a measured time, {a.default} s each): {total:.0f} s summed, "
          f"{now:.0f} s simulated wall time on -j {a.j} ({total / a.j:.0f} s if the cores never idled)")
    for t in sorted(tests, key=lambda t: -t["seconds"])[:a.top]:
        print(f"  {t['seconds']:7.1f} s  {t['name']}")
    for n in sorted(start, key=lambda n: -(start[n] + by_name[n]["seconds"]))[:a.show]:
        print(f"  ends at {start[n] + by_name[n]['seconds']:.0f} s (started at {start[n]:.0f} s): {n}")


if __name__ == "__main__":
    main()
