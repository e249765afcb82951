#!/usr/bin/env python3
"""check_export_value.py CFR_EXPORT CFR_ARENA MMD_RUN DEEP_CFR_RUN OUT_BASE CFR_RUN SMOKE_CONFIG: cfr-export --value-from
(a model that holds its policy and a value network, for the search player's value leaves).
  1. exported without --value-from, search:MODEL?depth=2 is refused (exit 2, naming --value-from);
  2. exported with --value-from MMD_RUN (its own run): exit 0, it says so ("fitted to this policy"),
     meta.json lists policy then value (the run's widths), manifest.json's value_network names the
     checkpoint, its iteration and fitted_to_this_policy = true;
  3. that model plays as the run (checkpoint:), and its value-leaf search plays exactly as the
     search over the run itself (search:RUN?depth=2): the same report, field for field but names
     and timings, on the same seeds;
  4. exported again from that model without --value-from, with its manifest passed as --manifest:
     one network, and no value_network left in the manifest;
  5. --value-from a Deep CFR run (no value network) is exit 2, naming what is missing, and writes
     nothing;
  6. a policy whose run's critic read the opponent's hand (mmd.value_input = "full", a 2-iteration
     run of SMOKE_CONFIG as MMD_RUN's) with MMD_RUN's information-state critic: the model's config
     takes the critic's value_input, so it loads and its depth-2 search plays;
  7. a policy trained with mmd.win_reward = 10 with MMD_RUN's critic (win_reward 0): exit 2 naming
     mmd.win_reward, nothing written; with its own run's critic it exports and its search plays.
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import shutil
import subprocess
import sys

export, arena, run, deep_cfr_run, base, cfr_run, smoke = sys.argv[1:8]
shutil.rmtree(base, ignore_errors=True)
os.makedirs(base)
plain, valued, again, refused = (os.path.join(base, n) for n in ("plain", "valued", "again", "refused"))


def fail(what):
    print(f"FAIL: {what}")
    sys.exit(1)


def run_export(*args):
    return subprocess.run([export, *args], capture_output=True, text=True, timeout=300)


def match(bot0, games=4, check=True):
    p = subprocess.run([arena, "--bot0", bot0, "--bot1", "random", "--games", str(games), "--seed", "5", "--json"],
                       capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        fail(f"{bot0}: exit {p.returncode}: {p.stderr[-1000:]}")
    return p


def smoke_mmd_run(run_dir, setting):
    """A 2-iteration MMD run of SMOKE_CONFIG, as MMD_RUN's but for `setting` (KEY=VALUE)."""
    r = subprocess.run([cfr_run, smoke, "--set", "algorithm.name=mmd", "--set", "mmd.rollouts_per_iteration=6", "--set",
                        "mmd.batch_size=64", "--set", "mmd.reward_scale=50", "--set", setting, "--run-dir", run_dir],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail(f"cfr-run {setting}: exit {r.returncode}: {r.stderr[-800:]}")


def same(a, b, what):
    a, b = json.loads(a.stdout), json.loads(b.stdout)
    skip = {"bot0", "bot1", "seconds", "games_per_second"}
    bad = [k for k in sorted(set(a) | set(b)) if k not in skip and (k not in a or k not in b or a[k] != b[k])]
    if bad or "games" not in a:
        fail(f"{what}: differ in {bad}: {[(a.get(k), b.get(k)) for k in bad][:5]}")


# 1. no value network without --value-from
r = run_export(run, plain)
if r.returncode != 0:
    fail(f"cfr-export {run} {plain}: exit {r.returncode}: {r.stderr}")
p = match(f"search:{plain}?k=2&n=2&cap=40&depth=2", check=False)
if p.returncode != 2 or "cfr-export --value-from" not in p.stderr:
    fail(f"depth=2 over a model without a value network: exit {p.returncode}: {p.stderr[-500:]}")

# 2. with the run's own value network
r = run_export(run, valued, "--value-from", run)
if r.returncode != 0 or "fitted to this policy" not in r.stdout:
    fail(f"cfr-export --value-from: exit {r.returncode}: {r.stdout} {r.stderr}")
latest = open(os.path.join(run, "checkpoints", "latest")).read().strip()
run_meta = json.load(open(os.path.join(run, "checkpoints", latest, "meta.json")))
run_nets = {n["name"]: n for n in run_meta["networks"]}
nets = json.load(open(os.path.join(valued, "meta.json")))["networks"]
if [n["name"] for n in nets] != ["policy", "value"] or any(n != run_nets.get(n["name"]) for n in nets):
    fail(f"meta.json lists {nets}, not the run's policy and value ({list(run_nets.values())})")
vn = json.load(open(os.path.join(valued, "manifest.json"))).get("value_network")
if not isinstance(vn, dict) or vn.get("fitted_to_this_policy") is not True or vn.get("iteration") != run_meta["iteration"] \
        or not str(vn.get("from", "")).endswith(latest):
    fail(f"manifest.json's value_network: {vn} (want from .../{latest}, iteration {run_meta['iteration']}, fitted)")

# 3. it plays as the run, and its search reads the same value network
same(match(f"checkpoint:{valued}", games=10), match(f"checkpoint:{run}", games=10), "the model's network against the run's")
searched_model = match(f"search:{valued}?k=2&n=2&cap=40&depth=2")
searched_run = match(f"search:{run}?k=2&n=2&cap=40&depth=2")
same(searched_model, searched_run, "the value-leaf search over the model against the one over its run")
if "searched" not in searched_model.stderr:
    fail(f"no cost line: {searched_model.stderr[-500:]}")

# 4. exported again without it: one network, no stale value_network (nor the notes beside it)
m = json.load(open(os.path.join(valued, "manifest.json")))
m["value_network_fit"], m["search"] = {"minutes": 1}, {"player": "search:x"}
with open(os.path.join(base, "notes.json"), "w") as f:
    json.dump(m, f)
r = run_export(valued, again, "--manifest", os.path.join(base, "notes.json"))
if r.returncode != 0:
    fail(f"cfr-export {valued} {again}: exit {r.returncode}: {r.stderr}")
nets = json.load(open(os.path.join(again, "meta.json")))["networks"]
m = json.load(open(os.path.join(again, "manifest.json")))
left = [k for k in ("value_network", "value_network_fit", "search") if k in m]
if [n["name"] for n in nets] != ["policy"] or left:
    fail(f"re-exported without --value-from: networks {[n['name'] for n in nets]}, value fields left: {left}")

# 5. a checkpoint without a value network
r = run_export(run, refused, "--value-from", deep_cfr_run)
if r.returncode != 2 or "has no value network on the information state" not in r.stderr or os.path.exists(refused):
    fail(f"--value-from a Deep CFR run: exit {r.returncode}: {r.stderr} (written: {os.path.exists(refused)})")

# 6. a full-state critic's policy with an information-state critic
full_run, full_model = os.path.join(base, "run_full"), os.path.join(base, "full_valued")
smoke_mmd_run(full_run, "mmd.value_input=full")
r = run_export(full_run, full_model, "--value-from", run)
if r.returncode != 0 or "trained beside another policy" not in r.stdout:
    fail(f"cfr-export of a full-critic policy with an info critic: exit {r.returncode}: {r.stdout} {r.stderr}")
if 'value_input = "info"' not in open(os.path.join(full_model, "config.toml")).read():
    fail("the model's config.toml does not take the critic's mmd.value_input")
p = match(f"search:{full_model}?k=2&n=2&cap=40&depth=2")
if json.loads(p.stdout).get("games") != 4:
    fail(f"search over the full-critic policy's model: {p.stdout[:300]}")

# 7. a policy trained with mmd.win_reward (its critic estimates the shaped return) with a critic of the plain return:
# refused, naming the key, nothing written; with its own run's critic it exports and searches
win_run, win_refused, win_model = (os.path.join(base, n) for n in ("run_win", "win_refused", "win_valued"))
smoke_mmd_run(win_run, "mmd.win_reward=10")
r = run_export(win_run, win_refused, "--value-from", run)
if r.returncode != 2 or "mmd.win_reward (0) differs" not in r.stderr or os.path.exists(win_refused):
    fail(f"--value-from a critic of another win_reward: exit {r.returncode}: {r.stderr} (written: {os.path.exists(win_refused)})")
r = run_export(win_run, win_model, "--value-from", win_run)
if r.returncode != 0:
    fail(f"cfr-export of the win_reward run with its own critic: exit {r.returncode}: {r.stderr}")
p = match(f"search:{win_model}?k=2&n=2&cap=40&depth=2")
if json.loads(p.stdout).get("games") != 4:
    fail(f"search over the win_reward policy's model: {p.stdout[:300]}")

print(f"ok: a model exported with its run's value network lists policy and value, plays and searches (depth=2) "
      f"exactly as its run; without --value-from depth is refused and a re-export drops value_network; "
      f"a Deep CFR run's --value-from is exit 2; a full-state critic's policy takes an information-state critic; "
      f"a critic of another mmd.win_reward is exit 2")
