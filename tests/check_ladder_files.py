#!/usr/bin/env python3
"""check_ladder_files.py LADDER.json LADDER.svg: cfr-ladder's JSON has every pair and rating of a
three-bot round robin, heuristic_balanced on top with an interval above the anchor, and the
picture names it. Exit 1 naming what is wrong."""
import json, sys

j = json.load(open(sys.argv[1]))
svg = open(sys.argv[2]).read()
bad = []
if len(j.get("pairs", [])) != 3: bad.append(f"pairs: {len(j.get('pairs', []))} (expected 3)")
if len(j.get("ratings", [])) != 3: bad.append(f"ratings: {len(j.get('ratings', []))} (expected 3)")
elif j["ratings"][0]["name"] != "heuristic_balanced": bad.append(f"top: {j['ratings'][0]['name']}")
elif not j["ratings"][0]["elo_lo95"] > 0: bad.append(f"top's interval reaches {j['ratings'][0]['elo_lo95']}")
if "<svg" not in svg or "heuristic_balanced" not in svg: bad.append("the SVG lacks the picture or the player")
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
print("ladder files ok: 3 pairs, 3 ratings, heuristic_balanced on top")
