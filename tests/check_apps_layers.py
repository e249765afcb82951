#!/usr/bin/env python3
"""check_layers.py [ROOT]: apps/ in layers (apps/README.md, docs/architecture.md).

Fails (exit 1, one line per finding) when
  - a file under apps/ includes a file of a folder that comes later in LAYERS (an include upward),
  - a folder under apps/ that holds C++ files is not in LAYERS (place it there),
  - an "apps/..." include names a file that does not exist, or an apps/ file includes with a
    path not rooted at the repository ("foo.h"),
  - includes among apps/ files form a cycle,
  - a file of engine/, sched/ or nets/ (the layers below apps/) includes apps/.
ROOT defaults to the repository holding this script's working directory.
"""
import os
import re
import subprocess
import sys

# Lowest first. A file may include files of its own folder and of the folders before it.
LAYERS = [
    "apps/run",                 # config, registry, options, checkpoint format, run files, MPI, signals
    "apps/players",             # networks that play: exact policy, checkpoint players, search, any player
    "apps/algorithms",          # Trainer, RunContext, the games against the bots
    "apps/algorithms/deep_cfr", # Deep CFR (with ESCHER's step)
    "apps/algorithms/escher",   # ESCHER's registration on Deep CFR's trainer
    "apps/algorithms/mmd",      # MMD
    "apps/train",               # the built-in list, their trainers, cfr-run's driver
    "apps/serve",               # cfr-serve's server (engine only)
    "apps",                     # the programs, cli.h
]
BELOW = ("engine", "sched", "nets")
SOURCE = re.compile(r"\.(h|hpp|cc|cpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
    os.chdir(root)
    rank = {folder: i for i, folder in enumerate(LAYERS)}
    problems = []
    graph = {}

    def sources(top):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if SOURCE.search(name):
                    yield os.path.join(dirpath, name).replace(os.sep, "/")

    for path in sources("apps"):
        folder = os.path.dirname(path)
        if folder not in rank:
            problems.append(f"{path}: folder {folder}/ is not in check_layers.py's LAYERS (place it in the order)")
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        graph[path] = []
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if "/" not in inc:
                problems.append(f"{path}:{line}: #include \"{inc}\" is not rooted at the repository")
                continue
            if not inc.startswith("apps/"):
                if inc.split("/")[0] in ("tests", "bench", "python"):
                    problems.append(f"{path}:{line}: includes {inc} (apps/ never includes the tests, bench or python)")
                continue
            if not os.path.isfile(inc):
                problems.append(f"{path}:{line}: includes {inc}, which does not exist")
                continue
            target = os.path.dirname(inc)
            if target not in rank:
                problems.append(f"{path}:{line}: includes {inc}, whose folder {target}/ is not in LAYERS")
                continue
            if rank[target] > rank[folder]:
                problems.append(f"{path}:{line}: includes {inc} upward ({folder}/ comes before {target}/)")
            graph[path].append(inc)

    # Cycles among files (a header and its .cc are separate nodes: a .cc including its own header
    # is no cycle).
    state = {}
    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2
    for node in sorted(graph):
        if node not in state:
            visit(node, [])

    for top in BELOW:
        if not os.path.isdir(top):
            continue
        for path in sources(top):
            text = open(path, encoding="utf-8", errors="replace").read()
            for m in INCLUDE.finditer(text):
                if m.group(1).startswith("apps/"):
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{path}:{line}: includes {m.group(1)} ({top}/ is below apps/)")

    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s); the order is: " + " < ".join(f"{f}/" for f in LAYERS))
        return 1
    print(f"check_layers: {len(graph)} files in {len(LAYERS)} folders, no include upward, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
