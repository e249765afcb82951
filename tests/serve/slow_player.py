#!/usr/bin/env python3
"""slow_player.py SECONDS: an external player (docs/external-players.md) that thinks SECONDS before
every answer, then plays the first legal move: cfr-serve's slow-opponent checks."""
import json
import sys
import time


def main():
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            print(json.dumps({"type": "ready", "name": "python-slow", "version": 1}), flush=True)
        elif kind == "decide":
            time.sleep(delay)
            sys.stdout.write('{"game":%d,"action":%d}\n' % (msg["game"], msg["legal"][0]["id"]))
        elif kind == "quit":
            break
        sys.stdout.flush()


if __name__ == "__main__":
    main()
