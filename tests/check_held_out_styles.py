#!/usr/bin/env python3
"""check_held_out_styles.py OUT_DIR -- bench/held_out_styles.py ARGS...: runs the held-out ladder with
ARGS plus --json OUT_DIR/held_out.json and checks its report against the request: exit 0; the ladder
is the one --style-seed names (the script's own draw), each variant 3 to 6 distinct keys of the box
with values inside it; a result for every player and variant with its numbers in range; the
summary recomputed from the rows. Prints "ok: held_out_styles: ..." when every check passes."""
import importlib.util
import json
import os
import subprocess
import sys


def fail(message):
    print(f"FAIL: held_out_styles: {message}")
    sys.exit(1)


def arg(args, flag, default):
    return type(default)(args[args.index(flag) + 1]) if flag in args else default


def main():
    out_dir, sep, script, *args = sys.argv[1:]
    if sep != "--":
        fail("usage: check_held_out_styles.py OUT_DIR -- SCRIPT ARGS...")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "held_out.json")
    if os.path.exists(path):
        os.remove(path)
    r = subprocess.run([sys.executable, script, *args, "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"exit {r.returncode}: {r.stderr.strip()}")
    report = json.load(open(path))

    spec = importlib.util.spec_from_file_location("held_out_styles", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    box = {key: (lo, hi, integer) for key, lo, hi, integer in mod.BOX}

    players = [args[i + 1] for i, a in enumerate(args) if a == "--player"]
    n = arg(args, "--variants", 24)
    games = arg(args, "--games", 2000)
    for key in ("variants", "players", "results", "summary", "games", "style_seed"):
        if key not in report:
            fail(f"the report lacks '{key}'")
    if report["players"] != players:
        fail(f"players {report['players']} != the request's {players}")
    if report["variants"] != mod.variants(n, arg(args, "--style-seed", 1)):
        fail("the ladder is not the one its style seed draws")
    if len(report["variants"]) != n:
        fail(f"{len(report['variants'])} variants, asked {n}")
    for v in report["variants"]:
        if not v.startswith("heuristic_expert?"):
            fail(f"variant {v!r} is not a heuristic_expert spec")
        kv = [p.split("=") for p in v[len("heuristic_expert?"):].split("&")]
        keys = [k for k, _ in kv]
        if not 3 <= len(keys) <= 6 or len(set(keys)) != len(keys):
            fail(f"variant {v!r}: want 3 to 6 distinct keys")
        for k, value in kv:
            if k not in box:
                fail(f"variant {v!r}: key {k!r} is not in the box")
            lo, hi, integer = box[k]
            x = float(value)
            if not lo <= x <= hi or (integer and x != int(x)):
                fail(f"variant {v!r}: {k}={value} outside [{lo}, {hi}]")
    rows_seen = 0
    for p in players:
        rows = report["results"].get(p)
        if rows is None or len(rows) != n:
            fail(f"player {p!r}: want {n} results")
        for row in rows:
            for key in ("games", "score_rate", "win_rate", "win_rate_lo95", "win_rate_hi95", "score_diff",
                        "se_score_diff"):
                if key not in row:
                    fail(f"player {p!r}: a result lacks '{key}'")
            if (row["games"] != games or not 0 <= row["score_rate"] <= 1
                    or not row["win_rate_lo95"] <= row["win_rate"] <= row["win_rate_hi95"]):
                fail(f"player {p!r}: a result out of range: {row}")
            rows_seen += 1
        s = report["summary"].get(p)
        if s is None:
            fail(f"no summary for {p!r}")
        mean = sum(r["score_rate"] for r in rows) / n
        mean_diff = sum(r["score_diff"] for r in rows) / n
        beaten = sum(r["win_rate_lo95"] > 0.5 for r in rows)
        worst = min(r["score_rate"] for r in rows)
        if (abs(s["mean_score_rate"] - mean) > 1e-9 or abs(s["mean_score_diff"] - mean_diff) > 1e-9
                or s["variants_beaten"] != beaten or s["worst_score_rate"] != worst):
            fail(f"player {p!r}: summary {s} does not follow from its rows "
                 f"(mean {mean}, beaten {beaten}, worst {worst})")
        if rows[s["worst_variant"]]["score_rate"] != worst:
            fail(f"player {p!r}: worst_variant {s['worst_variant']} is not the worst")
    print(f"ok: held_out_styles: {n} variants, {len(players)} players, {rows_seen} matches of {games} games, "
          f"summary recomputed")


if __name__ == "__main__":
    main()
