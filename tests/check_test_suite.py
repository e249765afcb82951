#!/usr/bin/env python3
"""check_test_suite.py BUILD_DIR README: the suite runs what it lists.

- every doctest case of every test executable is a CTest test of the same name, and the counts
  agree (a name CMake would split at ';' runs nothing and doctest exits 0: such a case fails here);
- no test case name holds ';';
- every CTest test has a label, and every label is documented in tests/README.md's label table;
- every doctest case tests/ci_schedule.cmake names (labels and COST of single cases, in the
  generated BUILD_DIR/tests/ci_doctest_cases.cmake) is a case of a test executable: a renamed
  case would lose its label silently.

Prints "ok: suite: ..." or "FAIL: suite: ..." (exit 1).
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

build, readme = sys.argv[1:3]


def fail(what):
    print(f"FAIL: suite: {what}")
    sys.exit(1)


listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
if listing.returncode != 0:
    fail(f"ctest --show-only failed: {listing.stderr}")
tests = json.loads(listing.stdout)["tests"]
if not tests:
    fail("ctest lists no test")

by_exe = defaultdict(set)
labels_used = set()
unlabelled = []
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    labels = props.get("LABELS", [])
    if not labels:
        unlabelled.append(t["name"])
    labels_used.update(labels)
    if ";" in t["name"]:
        fail(f"test name {t['name']!r} holds ';'")
    cmd = t.get("command", [])
    for a in cmd[1:]:
        if a.startswith("--test-case="):  # the case it runs (its test name may carry a prefix)
            by_exe[cmd[0]].add(a[len("--test-case="):].replace("\\,", ","))
if unlabelled:
    fail(f"{len(unlabelled)} tests have no label, e.g. {unlabelled[:5]}")

cases_total = 0
all_cases = set()
for exe, registered in sorted(by_exe.items()):
    out = subprocess.run([exe, "--list-test-cases"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{exe} --list-test-cases exited {out.returncode}")
    lines = out.stdout.splitlines()
    seps = [i for i, l in enumerate(lines) if l.startswith("=====")]
    if len(seps) < 2:
        fail(f"{exe}: unexpected --list-test-cases output")
    names = lines[seps[0] + 1:seps[1]]
    m = re.search(r"passing the current filters: (\d+)", out.stdout)
    if not m or int(m.group(1)) != len(names):
        fail(f"{exe}: listed {len(names)} names, doctest counts {m.group(1) if m else '?'}")
    for n in names:
        if ";" in n:
            fail(f"{exe}: the case {n!r} holds ';' (CMake splits it and it never runs)")
    missing = sorted(set(names) - registered)
    extra = sorted(registered - set(names))
    if missing or extra or len(names) != len(registered):
        fail(f"{exe}: doctest lists {len(names)} cases, CTest runs {len(registered)}; "
             f"not in CTest: {missing[:3]}; not in doctest: {extra[:3]}")
    cases_total += len(names)
    all_cases.update(names)

scheduled_file = os.path.join(build, "tests", "ci_doctest_cases.cmake")
scheduled = re.findall(r"^set_tests_properties\(\[==\[(.*?)\]==\]", open(scheduled_file).read(), re.M) \
    if os.path.exists(scheduled_file) else []
unknown = sorted(set(scheduled) - all_cases)
if unknown:
    fail(f"tests/ci_schedule.cmake names {len(unknown)} doctest case(s) no executable has: {unknown[:3]}")

documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", open(readme).read(), re.M))
undocumented = sorted(labels_used - documented)
if undocumented:
    fail(f"labels not documented in tests/README.md: {undocumented}")
print(f"ok: suite: {len(tests)} tests, all labelled ({len(labels_used)} labels, all documented); "
      f"{cases_total} doctest cases in {len(by_exe)} executables, each a CTest test; "
      f"{len(scheduled)} cases named in tests/ci_schedule.cmake, all found")
