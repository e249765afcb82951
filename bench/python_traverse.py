"""Traversal nodes/s with the networks answered in Python (cfr.traverse) against cfr-run's own
LibTorch networks, at the same network size, on the same phase (docs/python.md "Traversals with a
Python evaluator").

For each game's config, iteration 1's two traversal phases (both traversers, the config's
traversals per player, scheduler and window, one share) are run with:
  builtin   cfr-run itself (its LibTorch MLPs of the config's size, torch_threads = 1): the metrics'
            nodes_per_second of a one-iteration run (training cut to one update, few games);
  torch     cfr.traverse with a Python callable running the same-size torch MLP (Debian's
            python3-torch, torch.set_num_threads(1), no_grad);
  numpy     cfr.traverse with a callable returning zeros (the Python round trip alone);
  uniform   cfr.traverse with the engine's zero-cost stand-in (no Python call: the engine's ceiling).
Median of --repeats rounds (the kinds alternate within a round), min-max beside it, and each rate's
ratio to builtin's median.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_traverse.py [--games leduc lost_cities] [--repeats 3]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import cfr

REPO = pathlib.Path(__file__).resolve().parents[1]
CONFIGS = {"leduc": "configs/leduc.toml", "lost_cities": "configs/default.toml"}
# one share (cfr.traverse runs one scheduler), and a cfr-run iteration that is mostly its traversals
COMMON = ["traversal.parallel_shares=1"]
CFR_RUN_ONLY = [
    "run.max_iterations=1",
    "optimization.advantage_updates_per_iteration=1",
    "optimization.strategy_updates_per_iteration=1",
    "evaluation.games=2",
]


def network_shape(config):
    text = (REPO / config).read_text()
    import tomllib

    net = tomllib.loads(text).get("network", {})
    return net.get("num_layers", 3), net.get("hidden_size", 512)


def builtin_rate(cfr_run, config):
    with tempfile.TemporaryDirectory(prefix="cfr-bench-traverse-") as tmp:
        args = [cfr_run, str(REPO / config), "--run-dir", os.path.join(tmp, "run")]
        for s in COMMON + CFR_RUN_ONLY:
            args += ["--set", s]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines = pathlib.Path(tmp, "run", "metrics.jsonl").read_text().splitlines()
        m = json.loads(lines[-1])
        return m["nodes_per_second"], m["nodes"], m.get("batch_mean", 0.0)


def traverse_rate(config, evaluator):
    nodes, seconds, py_seconds, requests, forwards = 0, 0.0, 0.0, 0, 0
    for p in (0, 1):
        r = cfr.traverse(None, evaluator, config=str(REPO / config), set=COMMON, iteration=1, traverser=p)
        nodes += r.stats["nodes"]
        seconds += r.stats["seconds"]
        py_seconds += sum(v.get("seconds", 0.0) for v in r.stats["networks"].values())
        requests += r.stats["requests"]
        forwards += r.stats["forwards"]
    return nodes / seconds, nodes, requests / max(forwards, 1), py_seconds / seconds


def torch_evaluator(config, game):
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers, hidden = network_shape(config)
    W, A = game.information_state_tensor_size(), game.num_distinct_actions()

    def mlp():
        mods, width = [], W
        for _ in range(layers):
            mods += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
            width = hidden
        return torch.nn.Sequential(*mods, torch.nn.Linear(width, A)).eval()

    nets = [mlp() for _ in range(3)]

    @torch.no_grad()
    def evaluator(inputs, legal_mask, net):
        return nets[net](torch.from_numpy(inputs)).numpy()

    return evaluator, f"{layers}x{hidden}"


def zeros(inputs, legal_mask, net):
    return np.zeros(legal_mask.shape, np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["leduc", "lost_cities"], choices=sorted(CONFIGS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cfr-run", default=str(REPO / "build" / "bin" / "cfr-run"))
    args = ap.parse_args()
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"git {rev}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
    for game_name in args.games:
        config = CONFIGS[game_name]
        game = cfr.load_game(game_name)
        torch_ev, size = torch_evaluator(config, game)
        kinds = {
            "builtin": lambda: builtin_rate(args.cfr_run, config) + (0.0,),
            "torch": lambda: traverse_rate(config, torch_ev),
            "numpy": lambda: traverse_rate(config, zeros),
            "uniform": lambda: traverse_rate(config, "uniform"),
        }
        for kind in ("torch", "numpy", "uniform"):  # warm-up (torch's first forwards, contexts)
            kinds[kind]()
        rates = {k: [] for k in kinds}
        extra = {}
        for _ in range(args.repeats):
            for k, f in kinds.items():
                t = time.perf_counter()
                rate, nodes, batch, py_share = f()
                rates[k].append(rate)
                extra[k] = (nodes, batch, py_share, time.perf_counter() - t)
        base = statistics.median(rates["builtin"])
        print(f"\n{game_name} ({config}, networks {size}, one share, load average {os.getloadavg()[0]:.1f})")
        print(f"{'evaluator':<9} {'nodes/s median':>14} {'min-max':>19} {'ratio':>6} {'nodes':>7} {'batch':>6} {'in Python':>9}")
        for k, v in rates.items():
            nodes, batch, py_share, _ = extra[k]
            print(
                f"{k:<9} {statistics.median(v):>14,.0f} {min(v):>9,.0f}-{max(v):<9,.0f} {statistics.median(v) / base:>6.2f}"
                f" {nodes:>7} {batch:>6.1f} {py_share:>9.0%}"
            )


if __name__ == "__main__":
    main()
