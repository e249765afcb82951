#!/usr/bin/env python3
"""A ladder of opponents no run trained against: heuristic_expert with some of its weights redrawn.

Every league in configs/ names the expert and four of its styles; an agent that is strong only
against what it met shows it here first. Variant i of --style-seed S changes between 3 and 6 of the
expert's weights (chosen at random), each drawn uniformly from the box below: a plausible club
player's range for that weight, not the spec's whole allowed range (engine/games/expert_bot.cc
checks the spec, and refuses a value out of it). The draw uses Python's random.Random(S), so a seed
names the same ladder on any machine. Each player meets each variant in duplicate games
(cfr-arena --games G --seed M: the same deals for every player), and the report gives, per player,
its score rate and score difference against each variant, their mean, the worst variant and how
many variants it beats (the lower end of the 95% interval above 0.5).

    /usr/bin/python3 bench/held_out_styles.py --player checkpoint:models/lost-cities-styles-4h \
        --player checkpoint:models/lost-cities-mmd --player heuristic_expert --variants 24 --games 2000 \
        --json held_out.json

Prints a Markdown table (a row a variant, a column a player, then the summary rows) and, with
--json, writes every match's numbers. Bad arguments, or a player cfr-arena refuses, exit 2 naming it.
"""
import argparse
import json
import os
import random
import subprocess
import sys

# The held-out box: (key, low, high, integer). The expert's own values (ExpertParams,
# engine/games/expert_bot.h) lie inside every range.
BOX = [
    ("future_factor", 0.4, 1.2, False),
    ("open_margin", -2.0, 12.0, False),
    ("open_extra", 0.0, 10.0, False),
    ("free_opens", 1, 4, True),
    ("wager_margin", 0.0, 12.0, False),
    ("wager_deck_ratio", 0.2, 0.7, False),
    ("wager_min_cards", 1, 3, True),
    ("tempo", 0.0, 5.0, False),
    ("scarce_tempo", 0.0, 8.0, False),
    ("dead_bonus", 0.0, 2.0, False),
    ("gift_open", 0.25, 2.0, False),
    ("gift_open_flat", 0.0, 12.0, False),
    ("gift_closed", 0.0, 1.0, False),
    ("gift_known", 0.0, 3.0, False),
    ("option_value", 0.0, 0.5, False),
    ("deny", 0.0, 2.0, False),
    ("hold_cost", 0.0, 5.0, False),
    ("deck_speculative", 0.0, 1.0, False),
    ("late_ratio", 0.2, 0.5, False),
    ("run_weight", 0.0, 8.0, False),
    ("prolong_weight", 0.0, 8.0, False),
]
MAX_VARIANTS = 1000
MAX_GAMES = 1_000_000


def bad(message):
    print(f"held_out_styles: {message}", file=sys.stderr)
    sys.exit(2)


def variants(count, seed):
    """The ladder: `count` specs "heuristic_expert?key=value&...", the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        chosen = sorted(rng.sample(range(len(BOX)), rng.randint(3, 6)))
        parts = []
        for i in chosen:
            key, lo, hi, integer = BOX[i]
            value = rng.randint(lo, hi) if integer else round(rng.uniform(lo, hi), 2)
            parts.append(f"{key}={value}")
        out.append("heuristic_expert?" + "&".join(parts))
    return out


def match(arena, player, opponent, games, seed):
    """One duplicate match through cfr-arena; its JSON report, or exit 2 with cfr-arena's reason."""
    cmd = [arena, "--bot0", player, "--bot1", opponent, "--games", str(games), "--seed", str(seed), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        reason = (r.stderr.strip().splitlines() or ["no message"])[-1]
        if r.returncode == 2:
            bad(f"cfr-arena refused {player!r} against {opponent!r}: {reason}")
        print(f"held_out_styles: cfr-arena failed (exit {r.returncode}) on {player!r} against {opponent!r}: {reason}",
              file=sys.stderr)
        sys.exit(1)
    d = json.loads(r.stdout)
    for key in ("games", "wins", "draws", "win_rate", "win_rate_lo95", "win_rate_hi95", "avg_score_diff",
                "se_score_diff"):
        if key not in d:
            print(f"held_out_styles: cfr-arena's report lacks '{key}'", file=sys.stderr)
            sys.exit(1)
    return {
        "games": d["games"],
        "score_rate": (d["wins"] + d["draws"] / 2) / d["games"],
        "win_rate": d["win_rate"],
        "win_rate_lo95": d["win_rate_lo95"],
        "win_rate_hi95": d["win_rate_hi95"],
        "score_diff": d["avg_score_diff"],
        "se_score_diff": d["se_score_diff"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--player", action="append", required=True, help="a player as cfr-arena names it (repeat)")
    ap.add_argument("--variants", type=int, default=24, help="variants of heuristic_expert on the ladder")
    ap.add_argument("--style-seed", type=int, default=1, help="which ladder: the variants' draw")
    ap.add_argument("--games", type=int, default=2000, help="duplicate games a match (even)")
    ap.add_argument("--seed", type=int, default=11, help="the matches' deals")
    ap.add_argument("--arena", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin",
                                                    "cfr-arena"), help="the cfr-arena binary")
    ap.add_argument("--json", help="write every match's numbers to this file")
    a = ap.parse_args()
    if not 1 <= a.variants <= MAX_VARIANTS:
        bad(f"--variants {a.variants}: want 1 to {MAX_VARIANTS}")
    if not 2 <= a.games <= MAX_GAMES or a.games % 2:
        bad(f"--games {a.games}: want an even number from 2 to {MAX_GAMES} (duplicate deals)")
    if len(set(a.player)) != len(a.player):
        bad("--player: a player is listed twice")
    if not os.access(a.arena, os.X_OK):
        bad(f"--arena {a.arena}: not an executable (build the project first)")
    if a.json and not os.path.isdir(os.path.dirname(os.path.abspath(a.json))):
        bad(f"--json {a.json}: its folder does not exist")

    ladder = variants(a.variants, a.style_seed)
    results = {p: [] for p in a.player}
    for v in ladder:  # every player's first match comes first: a player cfr-arena refuses stops the run early
        for p in a.player:
            results[p].append(match(a.arena, p, v, a.games, a.seed))
    summary = {}
    for p, rows in results.items():
        worst = min(range(len(rows)), key=lambda i: rows[i]["score_rate"])
        summary[p] = {
            "mean_score_rate": sum(r["score_rate"] for r in rows) / len(rows),
            "mean_score_diff": sum(r["score_diff"] for r in rows) / len(rows),
            "worst_variant": worst,
            "worst_score_rate": rows[worst]["score_rate"],
            "variants_beaten": sum(r["win_rate_lo95"] > 0.5 for r in rows),
        }

    print("| variant | " + " | ".join(a.player) + " |")
    print("| --- |" + " --- |" * len(a.player))
    for i, v in enumerate(ladder):
        cells = [f"{results[p][i]['score_rate']:.3f}, {results[p][i]['score_diff']:+.1f}" for p in a.player]
        print(f"| {i}: `{v[len('heuristic_expert?'):]}` | " + " | ".join(cells) + " |")
    print("| **mean** | " + " | ".join(
        f"{summary[p]['mean_score_rate']:.3f}, {summary[p]['mean_score_diff']:+.1f}" for p in a.player) + " |")
    print("| worst (variant) | " + " | ".join(
        f"{summary[p]['worst_score_rate']:.3f} ({summary[p]['worst_variant']})" for p in a.player) + " |")
    print(f"| beaten (of {len(ladder)}) | " + " | ".join(str(summary[p]["variants_beaten"]) for p in a.player) + " |")

    if a.json:
        report = {"style_seed": a.style_seed, "games": a.games, "seed": a.seed, "variants": ladder,
                  "players": a.player, "results": results, "summary": summary}
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f, indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
