"""The GIL is released while C++ works: a second Python thread keeps running while VectorEnv
steps a large batch (and while a match runs)."""
import sys
import threading
import time

import numpy as np

import cfr


def check_released(work, duration, attempts=3):
    """Passes when, in one of `attempts` runs of work() on a second thread, this thread never paused
    for half of `duration` (the length of one C++ call): a held GIL pauses it for all of one call
    in every attempt; a busy machine may deschedule it once."""
    seen = []
    for _ in range(attempts):
        longest, count, _ = longest_pause_during(work)
        seen.append(f"{longest:.4f} s ({count} iterations)")
        if longest < 0.5 * duration and count > 1000:
            return
    raise AssertionError(f"this thread paused {', '.join(seen)}; one C++ call takes {duration:.4f} s")


def longest_pause_during(work):
    """Runs work() on a second thread; the main thread counts and returns (its longest pause
    between two iterations while work ran, its iterations, work's duration)."""
    done = threading.Event()
    span = {}

    def worker():
        t = time.perf_counter()
        work()
        span["seconds"] = time.perf_counter() - t
        done.set()

    th = threading.Thread(target=worker)
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        th.start()
        last = time.perf_counter()
        longest, count = 0.0, 0
        while not done.is_set():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
            count += 1
        th.join()
    finally:
        sys.setswitchinterval(old)
    return longest, count, span["seconds"]


def test_vector_env_step_releases_the_gil():
    env = cfr.VectorEnv("lost_cities", 40000, seed=0, opponent="heuristic_balanced")
    ts = env.reset()
    actions = ts.legal_mask.argmax(axis=1)
    t = time.perf_counter()
    env.step(actions)
    one_step = time.perf_counter() - t
    ts = env.reset()
    state = {"ts": ts}

    def work():
        for _ in range(4):
            state["ts"] = env.step(state["ts"].legal_mask.argmax(axis=1))

    # Held for a whole step, the GIL would stop this thread for about one step each time.
    assert one_step > 0.01, f"a step of 40000 games took only {one_step:.4f} s: too short to tell"
    check_released(work, one_step)


def test_match_releases_the_gil():
    def work():
        cfr.match("heuristic_balanced", "heuristic_cautious", games=200, seed=0)

    t = time.perf_counter()
    work()
    alone = time.perf_counter() - t
    assert alone > 0.01, f"the match took only {alone:.4f} s: too short to tell"
    check_released(work, alone)
