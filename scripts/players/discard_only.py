#!/usr/bin/env python3
"""The built-in `discard_only` bot (lost-cities.md §3) as an external player
(docs/external-players.md): in the CARD phase it discards hand slot 0 (action 1); in the DRAW
phase it draws from the deck when it may, else it takes the lowest legal discard pile. It never
opens an expedition. tests/check_external.py checks that its match reports equal the built-in
bot's, game for game.

    cfr-arena --bot0 "external:python3 scripts/players/discard_only.py" --bot1 heuristic_balanced
"""
import json
import sys


def choose(msg):
    legal = [a["id"] for a in msg["legal"]]
    if msg["phase"] == "card":
        return 1  # discard slot 0: always legal
    # DRAW phase: the deck is id 2·hand_size, the piles follow it in color order, so the lowest
    # legal id is the deck when the deck may be drawn, else the lowest legal pile.
    return min(legal)


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            print(json.dumps({"type": "ready", "name": "python-discard-only", "version": 1}), flush=True)
        elif kind == "decide":
            print(json.dumps({"game": msg["game"], "action": choose(msg)}), flush=True)
        elif kind == "quit":
            break


if __name__ == "__main__":
    main()
