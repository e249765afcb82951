#!/usr/bin/env python3
"""Actions per second from Python: cfr.VectorEnv against a plain-Python loop over the module's
own single-game API (docs/python.md "Benchmark").

Both play uniformly random legal moves with automatic resets and read the player to move's
observation every step, as a learner would:
  - vector: VectorEnv(game, n).step(actions) with the actions drawn in NumPy from the batched
    legal masks, (rng.random(mask.shape) * mask).argmax(axis=1);
  - loop:   n cfr.State objects, each step legal_actions(), a random choice, apply_action(),
    information_state_tensor(), a new game when one ends.
Each configuration is warmed up, then timed `--repeats` times; the table gives the median and
the spread (min–max) of actions per second, and the vector/loop ratio measured in the same run
(the machine is shared: ratios are steadier than absolute numbers).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_env.py [--game lost_cities] [--sizes 1,64,1024]
"""
import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time

import numpy as np

import cfr


def time_vector(game, n, seconds, threads, seed=0):
    env = cfr.VectorEnv(game, n, seed=seed, threads=threads)
    ts = env.reset()
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(16):
            actions = (rng.random(ts.legal_mask.shape) * ts.legal_mask).argmax(axis=1)
            ts = env.step(actions)
        steps += 16
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * n / elapsed, steps / elapsed


def time_loop(game, n, seconds, seed=0):
    rng = random.Random(seed)
    states = [game.new_initial_state(seed=seed * 1_000_003 + i) for i in range(n)]
    dealt = n
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(16):
            for i, s in enumerate(states):
                legal = s.legal_actions()
                s.apply_action(legal[rng.randrange(len(legal))])
                if s.is_terminal():
                    s = states[i] = game.new_initial_state(seed=seed * 1_000_003 + dealt)
                    dealt += 1
                s.information_state_tensor()
        steps += 16
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * n / elapsed, steps / elapsed


def measure(fn, repeats):
    fn()  # warm-up
    runs = [fn() for _ in range(repeats)]
    actions = [r[0] for r in runs]
    steps = [r[1] for r in runs]
    return statistics.median(actions), min(actions), max(actions), statistics.median(steps)


def fmt(x):
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="lost_cities")
    ap.add_argument("--sizes", default="1,64,1024")
    ap.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="VectorEnv's C++ threads")
    args = ap.parse_args()
    game = cfr.load_game(args.game)
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        rev = "?"
    print(f"# {args.game}, random legal moves, {args.repeats} runs of {args.seconds:g} s each; git {rev}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python {sys.version.split()[0]}; "
          f"VectorEnv threads={args.threads}")
    print("| n | VectorEnv actions/s (min–max) | VectorEnv steps/s | Python loop actions/s (min–max) | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    best = None
    for n in (int(x) for x in args.sizes.split(",")):
        v = measure(lambda: time_vector(game, n, args.seconds, args.threads), args.repeats)
        loop = measure(lambda: time_loop(game, n, args.seconds), args.repeats)
        print(f"| {n} | {fmt(v[0])} ({fmt(v[1])}–{fmt(v[2])}) | {v[3]:,.0f} | {fmt(loop[0])} ({fmt(loop[1])}–{fmt(loop[2])}) "
              f"| {v[0] / loop[0]:.1f}× |", flush=True)
        if best is None or v[0] > best[1]:
            best = (n, v[0])
    print(f"# fastest: n = {best[0]} at {fmt(best[1])} actions/s"
          f" ({'meets' if best[1] >= 1e6 else 'below'} the 1 M actions/s goal)")


if __name__ == "__main__":
    main()
