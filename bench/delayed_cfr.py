#!/usr/bin/env python3
"""bench/delayed_cfr.py [GAME] [ITERATIONS]: what one iteration of delay costs tabular CFR.

Linear CFR on the whole tree of Kuhn or Leduc (default leduc, 300 iterations): simultaneous
updates, regret matching, regrets and the average strategy weighted by t. With delay d, iteration
t plays the regret-matching strategy of the regrets up to iteration t - 1 - d (d = 1: iterations
1 and 2 both play uniformly), as Deep CFR's traversals do with deep_cfr.overlap (docs/deep-cfr.md
"Overlap"). Prints the exact exploitability of the average strategy (cfr.exploitability) at a few
iterations, for d = 0 and d = 1. Needs the `cfr` module (build/python; docs/python.md).
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
import cfr  # noqa: E402
import numpy as np  # noqa: E402

game = cfr.load_game(sys.argv[1] if len(sys.argv) > 1 else "leduc")
A = game.num_distinct_actions()

# Build the tree: node = ("c", [(p, child)]) | ("t", returns) | ("d", player, key, legal, {a: child})
def build(s):
    if s.is_terminal():
        return ("t", np.array(s.returns(), dtype=float))
    if s.is_chance_node():
        out = []
        for a, p in s.chance_outcomes():
            c = s.clone(); c.apply_action(a); out.append((p, build(c)))
        return ("c", out)
    p = s.current_player(); key = s.information_state_string(p); legal = s.legal_actions()
    kids = {}
    for a in legal:
        c = s.clone(); c.apply_action(a); kids[a] = build(c)
    return ("d", p, key, legal, kids)

root = build(game.new_initial_state())
keys = {}
def collect(n):
    if n[0] == "t": return
    if n[0] == "c":
        for _, c in n[1]: collect(c)
        return
    keys[n[2]] = n[3]
    for c in n[4].values(): collect(c)
collect(root)

def rm(R, legal):
    pos = np.maximum(R[legal], 0); s = pos.sum()
    return pos / s if s > 0 else np.full(len(legal), 1.0 / len(legal))

def run(delay, T, report):
    R = {k: np.zeros(A) for k in keys}
    S = {k: np.zeros(A) for k in keys}
    history = []  # regret tables of past iterations (delay)
    out = {}
    for t in range(1, T + 1):
        Rd = history[-delay] if delay and len(history) >= delay else (R if not delay else {k: np.zeros(A) for k in keys})
        sigma = {k: rm(Rd[k], keys[k]) for k in keys}
        newR = {k: R[k].copy() for k in keys}
        def walk(n, reach):  # returns values (2,)
            if n[0] == "t": return n[1]
            if n[0] == "c":
                return sum(p * walk(c, reach * np.array([1.0, 1.0, p])) for p, c in n[1])
            _, p, key, legal, kids = n
            sg = sigma[key]; v = np.zeros(2); va = []
            for i, a in enumerate(legal):
                r2 = reach.copy(); r2[p] *= sg[i]
                w = walk(kids[a], r2); va.append(w); v += sg[i] * w
            opp = reach[1 - p] * reach[2]
            for i, a in enumerate(legal):
                newR[key][a] += t * opp * (va[i][p] - v[p])
                S[key][a] += t * reach[p] * sg[i]
            return v
        walk(root, np.array([1.0, 1.0, 1.0]))
        history.append({k: R[k].copy() for k in keys})  # regrets up to t-1
        if len(history) > delay + 1: history.pop(0)
        R = newR
        if t in report:
            pol = {}
            for k, legal in keys.items():
                row = [0.0] * A; s = S[k][legal].sum()
                for i, a in enumerate(legal): row[a] = S[k][a] / s if s > 0 else 1.0 / len(legal)
                pol[k] = row
            out[t] = cfr.exploitability(game, pol)["exploitability"]
    return out

T = int(sys.argv[2]) if len(sys.argv) > 2 else 200
report = set([10, 20, 30, 50, 100, 150, 200, 300, 400]) & set(range(1, T + 1))
for d in (0, 1):
    r = run(d, T, report)
    print(f"delay {d}: " + "  ".join(f"{t}:{r[t]:.4f}" for t in sorted(r)), flush=True)
