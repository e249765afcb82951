#!/usr/bin/env python3
"""A Lost Cities player for external:COMMAND (docs/external-players.md): a uniformly random legal
move, drawn from a Python RNG seeded with the game's seed, so a match stays reproducible.

    cfr-arena --bot0 "external:python3 scripts/players/random_player.py" --bot1 heuristic_balanced
"""
import json
import random
import sys


def main():
    rngs = {}  # game id -> its RNG
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            print(json.dumps({"type": "ready", "name": "python-random", "version": 1}), flush=True)
        elif kind == "start":
            rngs[msg["game"]] = random.Random(msg["seed"])
        elif kind == "decide":
            action = rngs[msg["game"]].choice(msg["legal"])["id"]
            sys.stdout.write('{"game":%d,"action":%d}\n' % (msg["game"], action))
        elif kind == "end":
            rngs.pop(msg["game"], None)
        elif kind == "quit":
            break
        sys.stdout.flush()


if __name__ == "__main__":
    main()
