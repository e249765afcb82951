#!/usr/bin/env python3
"""Which of a player's moves lose it points? A diagnostic (docs/strength.md "Where the agent's
points go: moves handed to the expert"): a player whose moves of one kind (a VARIANT) are replaced
by another player's move at the same state (the REFEREE, default heuristic_expert), against each
opponent, beside the player unchanged, on the same duplicate deals. A variant that gains points
says the referee decides that kind of move better (in the player's games); one that loses says
the player does. Variants: capN (moves opening expedition N+1 or later, left alone where the
referee opens too), draw (the draw phase), card (the card phase), play, discard (by the player's
move), lateN (deck ≤ N cards), earlyN (deck > N), all (the referee plays alone). --control adds,
per variant, as many replacements expected at random among the moves where the two differ: what
mixing in the referee's moves does by itself.

    PYTHONPATH=build/python /usr/bin/python3 bench/move_attribution.py --player checkpoint:models/lost-cities-league \
        --variants cap3 draw card late10 --opponent heuristic_expert --opponent heuristic_balanced --games 2000 --seed 11

Prints one JSON object per (opponent, variant) line: win rate with its 95% interval, score
difference ± se, expeditions opened a game by each side, and the share of the player's decisions
replaced.
"""
import argparse
import json
import random
import re
import sys

import cfr

EXPEDITIONS = re.compile(r"^expeditions (\d): (.*)$", re.M)
HAND = re.compile(r"^hand: (.*)$", re.M)
DECK = re.compile(r"; deck (\d+);")
CELL = re.compile(r"(c\d)\[([^\]]*)\]")


def opened(state, seat):
    """Colors of `seat`'s expeditions holding a card, and `seat`'s hand (cards as 'cC:R')."""
    view = state.observation_string(seat)
    colors = set()
    for m in EXPEDITIONS.finditer(view):
        if int(m.group(1)) == seat:
            for color, cards in CELL.findall(m.group(2)):
                if cards.strip():
                    colors.add(color)
    hand = HAND.search(view).group(1).split()
    return colors, hand


def opens(state, action):
    """Whether `action` (ids: 2i = play slot i) puts a first card on an empty expedition, and how
    many expeditions the mover has opened."""
    if action >= 16 or action % 2 == 1:
        return False, 0
    seat = state.current_player()
    colors, hand = opened(state, seat)
    color = hand[action // 2].split(":")[0]
    return color not in colors, len(colors)


def deck_size(state):
    return int(DECK.search(state.observation_string(state.current_player())).group(1))


def variant_rule(name):
    """The moves a variant hands to the referee: rule(state, player's move, referee's move)."""
    if name.startswith("cap"):
        cap = int(name[3:])

        def rule(s, a, b):
            is_open, n = opens(s, a)
            return is_open and n >= cap and not opens(s, b)[0]  # left alone where the referee opens too

        return rule
    if name == "draw":
        return lambda s, a, b: a >= 16
    if name == "card":
        return lambda s, a, b: a < 16
    if name == "discard":
        return lambda s, a, b: a < 16 and a % 2 == 1
    if name == "play":
        return lambda s, a, b: a < 16 and a % 2 == 0
    if name.startswith("late"):
        n = int(name[4:])
        return lambda s, a, b: deck_size(s) <= n
    if name.startswith("early"):
        n = int(name[5:])
        return lambda s, a, b: deck_size(s) > n
    if name == "all":
        return lambda s, a, b: True
    sys.exit(f"move_attribution.py: unknown variant '{name}' (capN, draw, card, discard, play, lateN, earlyN, all)")


class Swapped:
    """`player`, with the moves `rule` picks replaced by `referee`'s move at the same state
    (random_share > 0: instead, that share of the moves where the referee would move otherwise, at
    random). Counts the moves where the two differ (`differ`)."""

    def __init__(self, player, referee, rule, random_share=0.0, seed=0):
        self.player, self.referee, self.rule, self.share = player, referee, rule, random_share
        self.rng = random.Random(seed)
        self.decisions = self.replaced = self.differ = 0

    def __call__(self, views):
        actions = list(self.player.choose_actions(views))
        for i, s in enumerate(views.states):
            self.decisions += 1
            a = actions[i]
            b = self.referee.choose_action(s)
            if b == a:
                continue
            self.differ += 1
            swap = self.rng.random() < self.share if self.share > 0 else self.rule(s, a, b)
            if swap:
                actions[i] = b
                self.replaced += 1
        return actions


def row(report, opponent, variant, share):
    return {
        "opponent": opponent,
        "variant": variant,
        "games": report["games"],
        "win_rate": round(report["win_rate"], 3),
        "lo95": round(report["win_rate_lo95"], 3),
        "hi95": round(report["win_rate_hi95"], 3),
        "score_diff": round(report["avg_score_diff"], 2),
        "se": round(report["se_score_diff"], 2),
        "opened0": report.get("opened_per_game0"),
        "opened1": report.get("opened_per_game1"),
        "replaced_share": round(share, 4),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--player", default="checkpoint:models/lost-cities-league")
    ap.add_argument("--referee", default="heuristic_expert")
    ap.add_argument("--variants", nargs="*", default=["cap2", "cap3", "cap4"],
                    help="capN (openings past N), draw, card, discard, play, lateN (deck ≤ N), earlyN (deck > N), all")
    ap.add_argument("--opponent", action="append")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--control", action="store_true", help="also the random-replacement control per variant")
    a = ap.parse_args()
    if a.games < 2 or a.games % 2:
        sys.exit("move_attribution.py: --games must be an even number ≥ 2 (duplicate deals)")
    player = cfr.load_player(a.player)
    referee = cfr.load_player(a.referee)
    for opp in a.opponent or ["heuristic_expert"]:
        r = cfr.match(player, opp, games=a.games, seed=a.seed)
        print(json.dumps(row(r, opp, "unchanged", 0.0)), flush=True)
        for v in a.variants:
            p = Swapped(player, referee, variant_rule(v))
            r = cfr.match(p, opp, games=a.games, seed=a.seed, parallel=64)
            share = p.replaced / max(1, p.decisions)
            print(json.dumps(row(r, opp, v, share)), flush=True)
            if a.control and share > 0:
                # as many replacements, expected, among the moves where the two differ
                c = Swapped(player, referee, None, random_share=p.replaced / p.differ, seed=a.seed)
                r = cfr.match(c, opp, games=a.games, seed=a.seed, parallel=64)
                print(json.dumps(row(r, opp, f"control {v}", c.replaced / max(1, c.decisions))), flush=True)


if __name__ == "__main__":
    main()
