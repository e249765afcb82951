#!/usr/bin/env python3
"""bench/imitation_capacity.py [--games N] [--epochs E] [--sizes 2x256,3x512] [--teacher heuristic_expert]

How well can the project's network shape imitate a rule bot? (docs/strength.md, issue 30.)
Plays N games of TEACHER against itself through the `cfr` module (deal seeds 0..N-1), records at
every decision the mover's 297-float information-state tensor, its legal-action mask and the
teacher's move; trains a fresh MLP of each size (ReLU, the project's shape: LAYERSxHIDDEN, masked
softmax cross-entropy, Adam 1e-3, batch 1024, one thread) on 90% of the games and reports the
held-out top-1 agreement with the teacher (games it did not train on), overall, in the card phase
and in the draw phase. One line of JSON per size.
Needs PYTHONPATH=build/python and Debian's python3-torch (/usr/bin/python3)."""
import argparse
import json
import time

import numpy as np
import torch

import cfr

ap = argparse.ArgumentParser()
ap.add_argument("--games", type=int, default=2000)
ap.add_argument("--epochs", type=int, default=8)
ap.add_argument("--sizes", default="2x256,3x512")
ap.add_argument("--teacher", default="heuristic_expert")
ap.add_argument("--slot-features", action="store_true",
                help="append, per hand slot, one-hot colour and rank and both players' expedition (length, last rank) "
                     "in that slot's colour: what the 297 floats give only as two scalars per slot")
args = ap.parse_args()
torch.set_num_threads(1)
torch.manual_seed(0)

game = cfr.load_game("lost_cities")
bot = cfr.make_bot(args.teacher, game)
A = game.num_distinct_actions()
H = game.rules["hand_size"]
X, M, Y, G, PH = [], [], [], [], []
t0 = time.time()
for g in range(args.games):
    s = game.new_initial_state(seed=g)
    step = 0
    while not s.is_terminal():
        p = s.current_player()
        a = bot.choose_action(s, g * 1000 + step)
        X.append(s.information_state_tensor(p))
        M.append(s.legal_actions_mask())
        Y.append(a)
        G.append(g)
        PH.append(0 if a < 2 * H else 1)
        s.apply_action(a)
        step += 1
X = np.stack(X)
if args.slot_features:
    # Decoded from the tensor itself (lost-cities.md §2 layout, default rules): slot s at 5 + 3s is
    # (present, (colour + 1) / C, rank / R); the expeditions at 5 + 3H, (player, colour) × (length
    # / cards per colour, last rank / R, wagers, score), players in absolute seats; offset 3 is the observer.
    r = game.rules
    C, R = r["n_colors"], r["n_ranks"]
    base = 5 + 3 * H
    me = X[:, 3].round().astype(int)
    extra = []
    for slot in range(H):
        present = X[:, 5 + 3 * slot]
        colour = np.clip(np.rint(X[:, 6 + 3 * slot] * C).astype(int) - 1, 0, C - 1)
        rank = np.clip(np.rint(X[:, 7 + 3 * slot] * R).astype(int), 0, R)
        extra.append(np.eye(C, dtype=np.float32)[colour] * present[:, None])
        extra.append(np.eye(R + 1, dtype=np.float32)[rank] * present[:, None])
        rows = np.arange(len(X))
        for who in (me, 1 - me):
            off = base + (who * C + colour) * 4
            extra.append((X[rows, off] * present)[:, None])      # length
            extra.append((X[rows, off + 1] * present)[:, None])  # last rank
    X = np.concatenate([X] + extra, axis=1).astype(np.float32)
X = torch.tensor(X)
M = torch.tensor(np.stack(M))
Y = torch.tensor(Y)
G = np.array(G)
PH = torch.tensor(PH)
gen_s = time.time() - t0
train = torch.tensor(G < int(0.9 * args.games))
test = ~train


def run(layers, hidden):
    mods, w = [], X.shape[1]
    for _ in range(layers):
        mods += [torch.nn.Linear(w, hidden), torch.nn.ReLU()]
        w = hidden
    net = torch.nn.Sequential(*mods, torch.nn.Linear(w, A))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xi, mi, yi = X[train], M[train], Y[train]
    n = xi.shape[0]
    t = time.time()
    for _ in range(args.epochs):
        perm = torch.randperm(n)
        for b in range(0, n, 1024):
            idx = perm[b:b + 1024]
            logits = net(xi[idx]).masked_fill(~mi[idx], -1e9)
            loss = torch.nn.functional.cross_entropy(logits, yi[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        pred = net(X[test]).masked_fill(~M[test], -1e9).argmax(1)
    ok = pred == Y[test]
    ph = PH[test]
    return {"size": f"{layers}x{hidden}", "samples_train": int(n), "samples_test": int(test.sum()),
            "agreement": round(ok.float().mean().item(), 4),
            "agreement_card_phase": round(ok[ph == 0].float().mean().item(), 4),
            "agreement_draw_phase": round(ok[ph == 1].float().mean().item(), 4),
            "train_seconds": round(time.time() - t, 1), "epochs": args.epochs, "teacher": args.teacher,
            "games": args.games, "generate_seconds": round(gen_s, 1), "inputs": int(X.shape[1]),
            "slot_features": args.slot_features}


for spec in args.sizes.split(","):
    l, h = spec.split("x")
    print(json.dumps(run(int(l), int(h))), flush=True)
