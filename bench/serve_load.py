#!/usr/bin/env python3
"""cfr-serve under load on loopback (docs/serve.md): GAMES concurrent games against OPPONENT (an
id of GET /api/players, e.g. model:lost-cities-mmd: its moves are batched across games by the
server's workers), each played to its end by its own client thread with keep-alive HTTP (a random
legal card, then the deck). With --slow SPEC, SLOW_GAMES more clients play SPEC (given to the
server as --opponent, e.g. a heavy search player) at the same time, and their latencies are
reported on a row of their own: the others' p99 shows whether the slow opponent holds them.
Bounded: the games, at most LIMIT seconds. Prints move latency p50/p90/p99/max, moves per second,
the server's peak resident memory and its largest opponent batch.

    bench/serve_load.py [--games 200] [--opponent model:lost-cities-mmd] [--slow SPEC --slow-games 4]
                        [--limit 300] [--bin build/bin]
"""
import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "serve"))
from serve_helpers import Server  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--games", type=int, default=200)
ap.add_argument("--opponent", default="heuristic_balanced")
ap.add_argument("--limit", type=float, default=300)
ap.add_argument("--bin", default="build/bin")
ap.add_argument("--work", default="/tmp/cfr-serve-load")
ap.add_argument("--slow", default=None, help="an --opponent spec for the server, played by --slow-games clients")
ap.add_argument("--slow-games", type=int, default=4)
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)

n_slow = a.slow_games if a.slow else 0
latencies, errors, finished = [], [], [0]
slow_latencies, slow_finished = [], [0]
ends = {False: 0.0, True: 0.0}  # when each group's last client finished
lock = threading.Lock()
start_gate = threading.Barrier(a.games + n_slow)


def player(url, k, deadline, opponent=None):
    host, port = url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    rng = random.Random(k)

    def call(method, path, body):
        t0 = time.perf_counter()
        conn.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        return r.status, json.loads(data), time.perf_counter() - t0

    try:
        start_gate.wait()
        st, v, _ = call("POST", "/api/games", {"opponent": opponent or a.opponent, "seat": k % 2, "seed": 1000 + k})
        if st != 201:
            raise RuntimeError(f"create: {st} {v}")
        mine = []
        while not v["over"] and time.time() < deadline:
            legal = [x["id"] for x in v["legal"]]
            act = rng.choice(legal) if v["phase"] == "card" else min(legal)
            st, v, dt = call("POST", f"/api/games/{v['id']}/move", {"action": act})
            if st != 200:
                raise RuntimeError(f"move: {st} {v}")
            mine.append(dt)
        with lock:
            (slow_latencies if opponent else latencies).extend(mine)
            (slow_finished if opponent else finished)[0] += v["over"]
            ends[bool(opponent)] = max(ends[bool(opponent)], time.time())
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(str(e))


extra = ["--max-games-per-client", str(a.games + n_slow + 10), "--max-games", str(a.games + n_slow + 10), "--move-budget", "60"]
if a.slow:
    extra += ["--opponent", a.slow]
with Server(a.bin, a.work, extra=extra) as srv:
    pid = srv.proc.pid
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    peak[0] = max(peak[0], int(line.split()[1]))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    deadline = time.time() + a.limit
    threads = [threading.Thread(target=player, args=(srv.url, k, deadline)) for k in range(a.games)]
    threads += [threading.Thread(target=player, args=(srv.url, a.games + k, deadline, "extra:1")) for k in range(n_slow)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    stop.set()
    sampler.join()
    _, stats = srv.call("GET", "/api/stats")

if errors:
    print(f"FAIL: {len(errors)} clients failed, e.g. {errors[0]}")
    sys.exit(1)
print(f"| games | opponent | finished | moves | wall (s) | moves/s | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | server peak RSS (MiB) | largest opponent batch |")
print(f"| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
rows = [(a.games, a.opponent, finished[0], latencies, ends[False] - t0)]
if a.slow:
    rows.append((n_slow, f"{a.slow} (beside)", slow_finished[0], slow_latencies, ends[True] - t0))
for games, opp, fin, lat, wall in rows:
    if len(lat) < 2:
        print(f"| {games} | {opp} | {fin} | {len(lat)} | {wall:.1f} | | | | | | {peak[0] / 1024:.0f} | {stats['largest_batch']} |")
        continue
    q = statistics.quantiles(lat, n=100)
    print(f"| {games} | {opp} | {fin} | {len(lat)} | {wall:.1f} | {len(lat) / wall:.0f} | "
          f"{q[49] * 1e3:.1f} | {q[89] * 1e3:.1f} | {q[98] * 1e3:.1f} | {max(lat) * 1e3:.1f} | {peak[0] / 1024:.0f} | {stats['largest_batch']} |")
