#!/usr/bin/env python3
"""An external player (docs/external-players.md) that plays like discard_only and commits one
fault, for tests/check_external.py:

    faulty_player.py MODE N [MARKER]

At its N-th decision (1-based) it commits fault MODE. With MARKER, only the first process does
(it creates the file), so a restarted player plays cleanly. Modes: illegal, malformed, noaction,
timeout (sleeps, answers nothing), skip_one (answers every decision of that round but one),
exit, crash (SIGSEGV), stop_reading (reads no more input; asks for the encoding, so the engine's
writes fill the pipe), bad_hello, silent_hello, none; deep_hello (a "version" nested 200,000
deep in its ready), children (starts a `sleep` that writes its pid to MARKER.child, then hangs),
stderr_flood (writes to its stderr without end, never answering), spam (1000 answers for a game
nobody plays before its real answer).
"""
import json
import os
import signal
import subprocess
import sys
import time

mode, n = sys.argv[1], int(sys.argv[2])
marker = sys.argv[3] if len(sys.argv) > 3 else None
armed = True
if marker:
    armed = not os.path.exists(marker)
    if armed:
        open(marker, "w").close()

decisions = 0
their = {}  # game id -> the opponent's expeditions as its "move" messages built them
opponent_moves = 0
print(f"faulty player: mode {mode} at decision {n}, armed {armed}", file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        if armed and mode == "bad_hello":
            print("hello yourself", flush=True)
            continue
        if armed and mode == "silent_hello":
            time.sleep(60)
        if armed and mode == "deep_hello":
            print('{"type": "ready", "version": ' + "[" * 200000 + "]" * 200000 + "}", flush=True)
            continue
        print(json.dumps({"type": "ready", "version": 1, "encoding": mode == "stop_reading"}), flush=True)
        continue
    if kind == "quit":
        print(f"faulty player: views consistent in {decisions} decisions, {opponent_moves} opponent moves",
              file=sys.stderr, flush=True)
        break
    if kind == "start":
        their[msg["game"]] = None
        continue
    if kind == "move":
        # The opponent's plays, told as they happen, must add up to what the next decide shows.
        opponent_moves += 1
        verb, card = (msg["name"].split(" ") + [""])[:2]
        if verb == "play":
            exps = their[msg["game"]]
            if exps is None:
                exps = their[msg["game"]] = [[] for _ in range(5)]
            exps[int(card[1:card.index(":")])].append(card)
        continue
    if kind == "end":
        if msg.get("reason") == "forfeit":
            print(f"faulty player: end of game {msg['game']}: forfeit, result {msg['result']}", file=sys.stderr, flush=True)
        their.pop(msg["game"], None)
        continue
    if kind != "decide":
        continue
    decisions += 1
    seen = their.get(msg["game"]) or [[] for _ in range(5)]
    if seen != msg["their_expeditions"]:
        print(f"faulty player: MISMATCH in game {msg['game']}: moves {seen}, decide {msg['their_expeditions']}",
              file=sys.stderr, flush=True)
        print(json.dumps({"game": msg["game"], "action": 99}), flush=True)
        continue
    action = 1 if msg["phase"] == "card" else min(a["id"] for a in msg["legal"])
    answer = json.dumps({"game": msg["game"], "action": action})
    if armed and decisions == n:
        print(f"faulty player: committing {mode} in game {msg['game']}", file=sys.stderr, flush=True)
        if mode == "illegal":
            answer = json.dumps({"game": msg["game"], "action": 99})
        elif mode == "malformed":
            answer = "this is not json"
        elif mode == "noaction":
            answer = json.dumps({"game": msg["game"], "move": action})
        elif mode == "timeout":
            time.sleep(60)
        elif mode == "skip_one":
            continue
        elif mode == "exit":
            sys.exit(3)
        elif mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif mode == "stop_reading":
            time.sleep(60)
        elif mode == "children":
            child = subprocess.Popen(["sleep", "300"])
            with open(marker + ".child", "w") as f:
                f.write(str(child.pid))
            time.sleep(60)
        elif mode == "stderr_flood":
            chunk = "x" * 65535 + "\n"
            while True:
                sys.stderr.write(chunk)
        elif mode == "spam":
            for _ in range(1000):
                print(json.dumps({"game": 999999, "action": 1}), flush=True)
    print(answer, flush=True)
