#!/usr/bin/env python3
"""paired_diff.py A.json B.json [--json]: two matches on the same duplicate deals, compared deal by
deal (docs/evaluation.md "Paired comparisons of two matches").

A and B are `cfr-arena --json --per-game` reports (bot 0's score difference per game index) played
with the same --seed, --games, --max-steps and protocol: e.g. a search setting against a network
and the plain network against it, or two agents against one bot. Per deal (its two games, seats
swapped) the statistic is A's mean score difference minus B's, and A's score rate minus B's (a win
1, a draw 1/2); the standard errors come from the spread of those per-deal differences, so the
deal's luck, shared by both matches, cancels. Prints both matches' means and the paired
differences with their standard errors and 95% intervals (normal), or one JSON object with --json.

Exit 2 naming the file and the field when a report is not a per-game report, when the two were not
played on the same deals, or when a game was forfeited or not played (its score is not the
players' play)."""
import argparse
import json
import math
import sys


def fail(msg):
    print(f"paired_diff.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            r = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: not a JSON report (line {e.lineno}: {e.msg})")
    if not isinstance(r, dict):
        fail(f"{path}: not a cfr-arena --json report (a JSON object)")
    for key in ("bot0", "bot1", "games", "duplicate_deals", "seed", "max_steps", "score_diffs", "faults"):
        if key not in r:
            fail(f"{path}: no '{key}': play the match with cfr-arena --json --per-game")
    d = r["score_diffs"]
    if not isinstance(d, list) or len(d) != r["games"]:
        fail(f"{path}: score_diffs has {len(d) if isinstance(d, list) else 'no'} entries for {r['games']} games")
    for k, v in enumerate(d):
        if not isinstance(v, int) or isinstance(v, bool):
            fail(f"{path}: score_diffs[{k}] = {json.dumps(v)}: game {k} was not played; a paired comparison needs every game")
    if r["faults"]:
        fail(f"{path}: {len(r['faults'])} forfeited game(s) (game {r['faults'][0].get('game')}): their scores are not the "
             f"players' play")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    for key in ("games", "seed", "max_steps", "duplicate_deals"):
        if a[key] != b[key]:
            fail(f"{args.a} and {args.b} were not played on the same deals: {key} {a[key]} against {b[key]}")
    if not a["duplicate_deals"]:
        fail(f"{args.a}: independent deals (--independent-deals): pair duplicate matches")
    games = a["games"]
    if games < 4 or games % 2:
        fail(f"{args.a}: {games} games: a paired comparison needs an even number of games, at least 4 (2 deals)")

    def rate(x):
        return 1.0 if x > 0 else (0.5 if x == 0 else 0.0)

    diff, score = [], []
    for d in range(games // 2):
        ga, gb = a["score_diffs"][2 * d:2 * d + 2], b["score_diffs"][2 * d:2 * d + 2]
        diff.append((ga[0] + ga[1]) / 2 - (gb[0] + gb[1]) / 2)
        score.append((rate(ga[0]) + rate(ga[1])) / 2 - (rate(gb[0]) + rate(gb[1])) / 2)

    def mean_se(xs):
        n = len(xs)
        m = sum(xs) / n
        var = sum((x - m) ** 2 for x in xs) / (n - 1)
        return m, math.sqrt(var / n)

    md, sd = mean_se(diff)
    ms, ss = mean_se(score)
    out = {
        "a": {"file": args.a, "bot0": a["bot0"], "bot1": a["bot1"], "avg_score_diff": sum(a["score_diffs"]) / games,
              "score_rate": sum(rate(x) for x in a["score_diffs"]) / games},
        "b": {"file": args.b, "bot0": b["bot0"], "bot1": b["bot1"], "avg_score_diff": sum(b["score_diffs"]) / games,
              "score_rate": sum(rate(x) for x in b["score_diffs"]) / games},
        "deals": games // 2, "seed": a["seed"],
        "score_diff": {"mean": md, "se": sd, "lo95": md - 1.96 * sd, "hi95": md + 1.96 * sd},
        "score_rate": {"mean": ms, "se": ss, "lo95": ms - 1.96 * ss, "hi95": ms + 1.96 * ss},
    }
    if args.json:
        print(json.dumps(out))
        return
    for tag in ("a", "b"):
        s = out[tag]
        print(f"{tag.upper()}: {s['bot0']} vs {s['bot1']}: score difference {s['avg_score_diff']:+.2f}, "
              f"score rate {s['score_rate']:.3f}")
    print(f"A - B over {games // 2} shared deals (seed {a['seed']}): score difference {md:+.2f} ± {sd:.2f} "
          f"(95% {md - 1.96 * sd:+.2f} to {md + 1.96 * sd:+.2f}), score rate {ms:+.3f} ± {ss:.3f} "
          f"(95% {ms - 1.96 * ss:+.3f} to {ms + 1.96 * ss:+.3f})")


main()
