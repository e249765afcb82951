#!/usr/bin/env python3
"""Bad-input sweep of every app flag and every cfr-run config key (docs/reliability.md).

    sweep_inputs.py BUILD_BIN_DIR CONFIGS_DIR WORK_DIR [--markdown OUT.md] [--jobs N] [--only APP,...] [--quick]

Every flag of every app, and every config key cfr-run lists with --print-config (through --set,
together with --print-config so that nothing trains), is tried with 0, -1, a huge value, the empty
string, a value of the wrong type and, for paths, a directory, a missing file and a path that
climbs out of its folder. Each case states the correct outcome: exit 2 with a message that names
the flag, key or file (a regex), or exit 0 where the value is legitimately valid. A crash, a
signal, exit 3, a hang (10 s) or a meaningless value accepted is a mismatch. Exits 1 when any case
differs from its expectation, listing them; --markdown writes the whole table.

cfr-run, cfr-eval and cfr-bench-batch exist only when the build has LibTorch (CFR_WITH_TORCH): their
cases are skipped, saying so, when the binaries are missing.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

HUGE = "99999999999999999999"  # beyond 64 bits
CLIMB = "../../../../../../../../../etc/passwd"
TIMEOUT_S = 10


class Case:
    def __init__(self, app, what, value, argv, rc, regex=None, note=""):
        self.app, self.what, self.value, self.argv = app, what, value, argv
        self.rc, self.regex, self.note = rc, regex, note
        self.got_rc, self.message, self.ok = None, "", False


def show(v):
    return "''" if v == "" else v


# ----------------------------------------------------------------------------- cases per app

def numeric_flag(app, flag, base, valid=None, lo_hint=None):
    """A count-like integer flag: 0, -1, huge, empty, 1.5 and 'abc' are all refused."""
    out = []
    for label, v in [("0", "0"), ("-1", "-1"), ("huge", HUGE), ("empty", ""), ("wrong type", "1.5"), ("wrong type", "abc"),
                     ("not decimal", "0x10")]:
        out.append(Case(app, flag, show(v), base + [flag, v], 2, re.escape(flag)))
    if valid is not None:
        out.append(Case(app, flag, valid, base + [flag, valid], 0, None, "valid"))
    return out


def seed_flag(app, base):
    out = [Case(app, "--seed", "0", base + ["--seed", "0"], 0, None, "valid: seed 0")]
    for v in ["-1", HUGE, "18446744073709551616", "", "1.5", "abc", "0x10"]:
        out.append(Case(app, "--seed", show(v), base + ["--seed", v], 2, r"--seed"))
    return out


def arena_cases(b, w):
    app, exe = "cfr-arena", [os.path.join(b, "cfr-arena")]
    base_bots = ["--bot0", "random", "--bot1", "random"]
    base = exe + base_bots + ["--games", "2"]
    c = []
    for flag, other in [("--bot0", ["--bot1", "random"]), ("--bot1", ["--bot0", "random"])]:
        for v, rx in [("0", r"unknown bot '0'"), ("-1", r"unknown bot '-1'|--bot"), (HUGE, r"unknown bot '9+'"),
                      ("", re.escape(flag)), ("random ", r"unknown bot 'random '"), (CLIMB, r"unknown bot"),
                      ("checkpoint:", r"checkpoint"), ("checkpoint:/", r"checkpoint|/"),
                      ("checkpoint:" + w + "/missing", r"missing"), ("checkpoint:" + CLIMB, r"passwd")]:
            c.append(Case(app, flag, show(v), exe + other + [flag, v, "--games", "2"], 2, rx))
    c.append(Case(app, "--bot0", "(missing)", exe + ["--bot1", "random", "--games", "2"], 2, r"--bot0"))
    c += numeric_flag(app, "--games", exe + base_bots, valid="1")
    c += seed_flag(app, base)
    c += numeric_flag(app, "--max-steps", base, valid="1")
    for v, rx in [("0", r"--rules"), ("-1", r"--rules"), ("", r"--rules"), ("abc", r"--rules"), ("[]", r"--rules"),
                  ('{"n_colors":0}', r"n_colors"), ('{"n_colors":-1}', r"n_colors"), ('{"n_colors":%s}' % HUGE, r"n_colors"),
                  ('{"n_colors":"abc"}', r"n_colors"), ('{"n_colors":1.5}', r"n_colors"), ('{"colours":3}', r"colours")]:
        c.append(Case(app, "--rules", show(v), base + ["--rules", v], 2, rx))
    c.append(Case(app, "--rules", "{}", base + ["--rules", "{}"], 0, None, "valid: no override"))
    c.append(Case(app, "--json", "abc", base + ["--json=abc"], 2, r"--json"))
    c.append(Case(app, "--json", "0", base + ["--json=0"], 0, None, "valid: explicit false"))
    for v, rx in [("", r"--replay"), ("/", r"/: is a directory|--replay"), (w + "/missing.jsonl", r"missing\.jsonl"),
                  (CLIMB, r"passwd"), ("0", r"'?0'?: no such file|--replay")]:
        c.append(Case(app, "--replay", show(v), exe + ["--replay", v, "--quiet"], 2, rx))
    c.append(Case(app, "--replay", "with --bot0", exe + ["--replay", w + "/missing.jsonl", "--bot0", "random"], 2, r"--replay"))
    for flag in ["--check-bots", "--quiet"]:
        c.append(Case(app, flag, "without --replay", base + [flag], 2, re.escape(flag) + r".*--replay"))
    c.append(Case(app, "(positional)", "extra", base + ["extra"], 2, r"extra"))
    return c


def solve_cases(b, w):
    app, exe = "cfr-solve", [os.path.join(b, "cfr-solve")]
    base = exe + ["--game", "kuhn", "--algo", "cfr", "--iterations", "1"]
    c = []
    for v in ["0", "-1", HUGE, "", CLIMB, "Kuhn"]:
        c.append(Case(app, "--game", show(v), exe + ["--game", v, "--algo", "cfr", "--iterations", "1"], 2, r"--game|unknown game"))
    c.append(Case(app, "--game", "(missing)", exe + ["--algo", "cfr"], 2, r"--game"))
    for v in ["0", "-1", HUGE, "", CLIMB]:
        c.append(Case(app, "--algo", show(v), exe + ["--game", "kuhn", "--algo", v, "--iterations", "1"], 2, r"--algo|unknown algorithm"))
    c += numeric_flag(app, "--iterations", exe + ["--game", "kuhn", "--algo", "cfr"], valid="1")
    c += seed_flag(app, base)
    os.makedirs(os.path.join(w, "solve_sub"), exist_ok=True)
    for v, rx in [("", r"--out"), ("/", r"--out|/"), (w, r"--out|is a directory"), (w + "/missing/p.json", r"--out.*missing|missing.*folder")]:
        c.append(Case(app, "--out", show(v), base + ["--out", v], 2, rx))
    c.append(Case(app, "--out", "DIR/sub/../p.json", base + ["--out", w + "/solve_sub/../kuhn_policy.json"], 0, None,
                  "valid: the user's own path (relative paths may climb)"))
    c += numeric_flag(app, "--report-every", base, valid="1")
    for v in ["0", "-1", HUGE, "", "abc", "nan", "inf", "1.5"]:
        # the message must name the flag and print its bound readably (not 1e-9 as 0.000000)
        c.append(Case(app, "--os-epsilon", show(v), exe + ["--game", "kuhn", "--algo", "os-mccfr", "--iterations", "1", "--os-epsilon", v],
                      2, r"--os-epsilon(?!.*0\.000000)"))
    c.append(Case(app, "--os-epsilon", "1", exe + ["--game", "kuhn", "--algo", "os-mccfr", "--iterations", "1", "--os-epsilon", "1"], 0))
    return c


def exploit_cases(b, w):
    app, exe = "cfr-exploit", [os.path.join(b, "cfr-exploit")]
    c = []
    for v, rx in [("", r"POLICY"), ("/", r"/: is a directory"), ("0", r"0: no such file"), (w + "/missing.json", r"missing\.json"),
                  (CLIMB, r"passwd: invalid JSON"), (HUGE, r"9+: no such file")]:
        c.append(Case(app, "POLICY", show(v), exe + [v], 2, rx))
    c.append(Case(app, "POLICY", "(missing)", exe, 2, r"POLICY"))
    c.append(Case(app, "--json", "abc", exe + [w + "/kuhn_policy.json", "--json=abc"], 2, r"--json"))
    c.append(Case(app, "POLICY", "a solved policy", exe + [w + "/kuhn_policy.json", "--json"], 0, None, "valid"))
    return c


def plot_cases(b, w):
    app, exe = "cfr-plot", [os.path.join(b, "cfr-plot")]
    run = os.path.join(w, "plot_run")
    c = []
    for v, rx in [("", r"RUN_DIR"), ("/", r"/metrics\.jsonl: no such file"), ("0", r"0/metrics\.jsonl"),
                  (w + "/missing", r"missing/metrics\.jsonl"), (CLIMB, r"passwd"), (w + "/bad_metrics_run", r"metrics\.jsonl:2: invalid JSON")]:
        c.append(Case(app, "RUN_DIR", show(v), exe + [v], 2, rx))
    for v in ["0", "", "PNG", "pdf"]:
        c.append(Case(app, "--format", show(v), exe + [run, "--format", v], 2, r"--format"))
    for v, rx in [("", r"--out"), (w + "/file.txt", r"file\.txt")]:
        c.append(Case(app, "--out", show(v), exe + [run, "--out", v], 2, rx))
    c.append(Case(app, "--out", "DIR/sub/../plots", exe + [run, "--out", w + "/solve_sub/../plots_out", "--format", "svg"], 0, None, "valid"))
    return c


def eval_cases(b, w):
    app, exe = "cfr-eval", [os.path.join(b, "cfr-eval")]
    kuhn, lc = os.path.join(w, "kuhn_run"), os.path.join(w, "lc_run")
    c = []
    for v, rx in [("", r"CHECKPOINT"), ("/", r"/: not a checkpoint"), ("0", r"'?0'?"), (w + "/missing", r"missing"),
                  (CLIMB, r"passwd"), (w + "/file.txt", r"file\.txt"),
                  (w + "/latest_climbs", r"latest.*(\.\./|climbs|outside)"), (w + "/latest_empty", r"latest.*(empty|names no)"),
                  (w + "/latest_missing", r"iter-000099")]:
        c.append(Case(app, "CHECKPOINT", show(v), exe + [v], 2, rx))
    c += numeric_flag(app, "--games", exe + [lc, "--opponent", "random"], valid="1")
    c += numeric_flag(app, "--max-steps", exe + [lc, "--opponent", "random", "--games", "1"], valid="1")
    c += seed_flag(app, exe + [lc, "--opponent", "random", "--games", "1"])
    for v, rx in [("0", r"--opponent"), ("-1", r"--opponent"), ("", r"--opponent"), (HUGE, r"--opponent"), (CLIMB, r"--opponent")]:
        c.append(Case(app, "--opponent", show(v), exe + [lc, "--games", "1", "--opponent", v], 2, rx))
    c.append(Case(app, "--opponent", "random then nobody", exe + [lc, "--games", "1", "--opponent", "random", "--opponent", "nobody"],
                  2, r"--opponent.*nobody|nobody.*--opponent"))
    c.append(Case(app, "--opponent", "on a kuhn checkpoint", exe + [kuhn, "--opponent", "random"], 2, r"--opponent"))
    c.append(Case(app, "--games", "on a kuhn checkpoint", exe + [kuhn, "--games", "5"], 2, r"--games"))
    c.append(Case(app, "--json", "abc", exe + [kuhn, "--json=abc"], 2, r"--json"))
    c.append(Case(app, "CHECKPOINT", "a kuhn run", exe + [kuhn, "--json"], 0, None, "valid"))
    return c


def bench_cases(b, cfgs, w):
    app, exe = "cfr-bench-batch", [os.path.join(b, "cfr-bench-batch")]
    tiny = ["--set", "network.hidden_size=8", "--set", "network.num_layers=1"]
    quick = ["--batches", "1", "--repeats", "1", "--min-ms", "1"]
    c = []
    for v, rx in [("", r"CONFIG"), ("/", r"/: is a directory"), (w + "/missing.toml", r"missing\.toml"), (CLIMB, r"passwd:1")]:
        c.append(Case(app, "CONFIG", show(v), exe + [v] + quick, 2, rx))
    for v, rx in [("", r"--set"), ("=", r"--set"), ("run.nokey=1", r"run\.nokey"), ("network.hidden_size=0", r"network\.hidden_size"),
                  ("network.hidden_size=" + HUGE, r"network\.hidden_size")]:
        c.append(Case(app, "--set", show(v), exe + quick + ["--set", v], 2, rx))
    for v in ["0", "-1", "", "tpu", "CPU"]:
        c.append(Case(app, "--device", show(v), exe + quick + ["--device", v], 2, r"--device"))
    for v in ["0", "-1", "", HUGE, "abc", "1.5", "1,,4", "1,"]:
        c.append(Case(app, "--batches", show(v), exe + ["--repeats", "1", "--min-ms", "1", "--batches", v], 2, r"--batches"))
    c += numeric_flag(app, "--repeats", exe + tiny + ["--batches", "1", "--min-ms", "1"], valid="1")
    for v in ["0", "-1", HUGE, "", "abc", "nan", "inf"]:
        c.append(Case(app, "--min-ms", show(v), exe + tiny + ["--batches", "1", "--repeats", "1", "--min-ms", v], 2, r"--min-ms"))
    c += numeric_flag(app, "--threads", exe + tiny + quick)
    for flag in ["--csv", "--json"]:
        for v, rx in [("", re.escape(flag)), ("/", re.escape(flag)), (w, re.escape(flag)), (w + "/missing/o", re.escape(flag) + r".*missing")]:
            c.append(Case(app, flag, show(v), exe + tiny + quick + [flag, v], 2, rx))
    c.append(Case(app, "--train", "abc", exe + tiny + quick + ["--train=abc"], 2, r"--train"))
    for v in ["0", "", "fp16", "FP32", "fp32,", "fp32,fp32", CLIMB]:
        c.append(Case(app, "--precisions", show(v), exe + tiny + quick + ["--precisions", v], 2, r"--precisions"))
    c.append(Case(app, "--precisions", "bf16,fp32", exe + tiny + quick + ["--precisions", "bf16,fp32"], 0, None, "valid"))
    c.append(Case(app, "(all)", "tiny valid run", exe + tiny + quick + ["--csv", w + "/solve_sub/../b.csv"], 0, None, "valid"))
    return c


# A real key: --print-config prints every real as a TOML float (0.0, 1e-06), an integer without a
# point, so the type of any key, a registered algorithm's or scheduler's too, is read off its value.
REAL_VALUE = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?")


def is_real(shown):
    return REAL_VALUE.fullmatch(shown) is not None and any(ch in shown for ch in ".eE")


# Keys where 0 is meaningful (the reason goes into the table); every other numeric key must refuse 0.
ZERO_OK = {
    "mmd.search_share": "0 = no search (the bot teacher)", "mmd.search_depth": "0 = rollouts to the end",
    "mmd.search_prior": "no prior bonus",
    "run.seed": "seed 0", "run.max_minutes": "0 = no limit", "rules.n_handshakes": "no wager cards",
    "rules.expedition_penalty": "no penalty", "rules.bonus_amount": "no bonus", "network.invariant_chunk": "0 = off",
    "traversal.max_nodes_per_traversal": "0 = no cap", "traversal.regret_matching_epsilon": "plain regret matching",
    "traversal.outcome_sampling_epsilon": "on-policy sampling", "traversal.outcome_sampling_value_clip": "0 = no clip",
    "scheduler.pooled.deadline_us": "0 = never flush early",
    "optimization.advantage_updates_per_iteration": "0 = traversal-only runs (bench/scaling.sh)",
    "optimization.strategy_updates_per_iteration": "0 = traversal-only runs",
    "optimization.learning_rate_decay_iterations": "0 = constant", "optimization.weight_decay": "no decay",
    "optimization.grad_clip": "0 = no clip", "optimization.ema_decay": "0 = no averaging",
    "checkpoint.save_every": "0 = only the latest", "evaluation.eval_every": "0 = only at the end",
    "evaluation.games": "0 = no bot games (bench/scaling.sh)",
    "mmd.opponent_share": "0 = no league games", "mmd.opponent_priority": "0 = uniform draw",
    "mmd.opponent_decay": "0 = the last iteration's games only",
    "mmd.magnet_weight": "0 = no magnet", "mmd.magnet_every": "0 = the magnet stays", "mmd.entropy_weight": "no bonus",
    "mmd.gae_lambda": "one-step advantages", "mmd.win_reward": "the return alone", "mmd.bc_weight": "no cloning",
    "mmd.bc_fade_iterations": "0 = never fades", "mmd.bot_share": "no bot games", "mmd.snapshot_share": "no snapshot games",
    "escher.sampling_epsilon": "on-policy sampling", "escher.value_epsilon": "on-policy value trajectories",
    "escher.value_clip": "0 = no clip", "escher.value_updates_per_iteration": "0 = traversal-only runs",
}
# Text keys whose empty value is their default (nothing named).
EMPTY_OK = {"mmd.initial_policy": "valid: no initial policy (a fresh network)"}
NEG_OK = {"rules.expedition_penalty": "a bonus instead", "rules.bonus_amount": "a malus"}


def print_config_keys(b, cfgs):
    out = subprocess.run([os.path.join(b, "cfr-run"), os.path.join(cfgs, "smoke.toml"), "--print-config"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise SystemExit(f"cfr-run --print-config failed ({out.returncode}): {out.stderr}")
    keys, section = [], None
    for line in out.stdout.splitlines():
        m = re.match(r"\[([\w.]+)\]$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"(\w+) = (.*?)  # ", line)
        if m:
            keys.append((f"{section}.{m.group(1)}", m.group(2)))
    return keys


def run_cases(b, cfgs, w, quick=False):
    app, exe = "cfr-run", [os.path.join(b, "cfr-run")]
    smoke, kuhn = os.path.join(cfgs, "smoke.toml"), os.path.join(w, "kuhn_run")
    pc = exe + [smoke, "--print-config"]
    c = []
    for v, rx in [("", r"CONFIG|give a CONFIG"), ("/", r"/: is a directory"), ("0", r"0: no such file"),
                  (w + "/missing.toml", r"missing\.toml"), (CLIMB, r"passwd:1")]:
        c.append(Case(app, "CONFIG", show(v), exe + [v, "--print-config"], 2, rx))
    for v, rx in [("", r"--resume"), ("/", r"/config\.toml|--resume"), (w + "/missing", r"missing"), (w + "/file.txt", r"file\.txt"),
                  (CLIMB, r"passwd")]:
        c.append(Case(app, "--resume", show(v), exe + ["--resume", v, "--print-config"], 2, rx))
    # A copied run whose checkpoints/latest names something else: resuming must refuse before training.
    for d, rx in [("latest_climbs", r"latest.*(\.\./|climbs|outside)"), ("latest_empty", r"latest.*(empty|names no)"),
                  ("latest_missing", r"iter-000099")]:
        c.append(Case(app, "--resume", f"run whose latest is {d[7:]}", exe + ["--resume", os.path.join(w, d), "--set", "run.max_iterations=1"], 2, rx))
    c.append(Case(app, "--resume", "and another --run-dir", exe + ["--resume", kuhn, "--run-dir", w + "/other", "--print-config"], 2, r"--run-dir"))
    c.append(Case(app, "--resume", "with CONFIG", exe + [smoke, "--resume", kuhn, "--print-config"], 2, r"--resume"))
    for v, rx in [("", r"--run-dir"), (w + "/file.txt", r"file\.txt"), ("/proc/x", r"/proc")]:
        c.append(Case(app, "--run-dir", show(v), exe + [smoke, "--set", "run.max_iterations=1", "--run-dir", v], 2, rx))
    c.append(Case(app, "--run-dir", "a run dir that holds a run", exe + [smoke, "--run-dir", kuhn], 2, r"already holds a run"))
    for v, rx in [("", r"--set"), ("=", r"--set"), (".=1", r"unknown section"), ("run.=1", r"unknown key 'run\.'"),
                  ("run", r"--set 'run'"), ("nosection.x=1", r"unknown section \[nosection\]"), ("run.nokey=1", r"unknown key 'run\.nokey'"),
                  ("run.seed.x=1", r"run\.seed"), ("run.seed=1\nrun.game=\"kuhn\"", r"--set")]:
        c.append(Case(app, "--set", show(v).replace("\n", "\\n"), pc + ["--set", v], 2, rx))
    c.append(Case(app, "--allow-training-changes", "without --resume", pc + ["--allow-training-changes"], 2, r"--allow-training-changes"))
    c.append(Case(app, "--print-config", "abc", exe + [smoke, "--print-config=abc"], 2, r"--print-config"))
    c.append(Case(app, "--distributed", "one process", pc + ["--distributed"], 0, None, "valid: a single process has no roles"))
    # Every config key.
    for key, shown in print_config_keys(b, cfgs):
        k = re.escape(key)
        # An algorithm's own keys are swept in a run of that algorithm (its validation runs then).
        base = pc + ["--set", "algorithm.name=mmd"] if key.startswith("mmd.") else pc
        def add(label, v, rc, note=""):
            c.append(Case(app, key, label if label else show(v), base + ["--set", f"{key}={v}"], rc, None if rc == 0 else k, note))
        if shown in ("true", "false"):
            for v in (["0"] if quick else ["0", "1", "", "abc"]):
                add(None, v, 2)
            if not quick:
                add(None, "false" if shown == "true" else "true", 0, "valid")
        elif shown.startswith("["):
            for v in ["0", "", "[1]", '["nobody"]', '[""]', f'["{CLIMB}"]']:
                add(None, v, 2)
            add(None, "[]", 0, "valid: no bot games")
        elif key == "run.experiment_name":  # any name, not a path (it names the run directory)
            for v in ["", CLIMB, "a/b"] + ([] if quick else ["0", "-1"]):
                add(None, v, 2)
            add(None, HUGE, 0, "valid: digits are a name")
        elif key in EMPTY_OK:
            for v in (["", CLIMB] if quick else ["0", "-1", HUGE, CLIMB, '"x"']):
                add(None, v, 2)
            add(None, "", 0, EMPTY_OK[key])
        elif shown.startswith('"'):
            for v in (["", CLIMB] if quick else ["0", "-1", HUGE, "", CLIMB, '"x"']):
                add(None, v, 2)
        elif is_real(shown):
            if not quick or key not in ZERO_OK:
                add(None, "0", 0 if key in ZERO_OK else 2, ZERO_OK.get(key, ""))
            for v in (["-1", "nan"] if quick else ["-1", "1e400", HUGE, "", "abc", "nan", "true"]):
                add(None, v, 2)
        else:  # an integer
            if not quick or key not in ZERO_OK:
                add(None, "0", 0 if key in ZERO_OK else 2, ZERO_OK.get(key, ""))
            if not quick or key in ZERO_OK:
                add(None, "-1", 0 if key in NEG_OK else 2, NEG_OK.get(key, ""))
            for v in (["9223372036854775807"] if quick else [HUGE, "9223372036854775807", "", "1.5"]):
                add(None, v, 2)
    return c


# ----------------------------------------------------------------------------- setup and running

def setup(b, cfgs, w, torch):
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    with open(os.path.join(w, "file.txt"), "w") as f:
        f.write("a file\n")
    os.makedirs(os.path.join(w, "plot_run"))
    with open(os.path.join(w, "plot_run", "metrics.jsonl"), "w") as f:
        f.write('{"iteration":1,"loss_strategy":0.5,"traversal_seconds":1.0}\n')
    os.makedirs(os.path.join(w, "bad_metrics_run"))
    with open(os.path.join(w, "bad_metrics_run", "metrics.jsonl"), "w") as f:
        f.write('{"iteration":1}\n{"iteration":\n')
    subprocess.run([os.path.join(b, "cfr-solve"), "--game", "kuhn", "--algo", "cfr", "--iterations", "10",
                    "--out", os.path.join(w, "kuhn_policy.json")], capture_output=True, check=True, timeout=60)
    if not torch:
        return
    run = os.path.join(b, "cfr-run")
    subprocess.run([run, os.path.join(cfgs, "kuhn.toml"), "--set", "run.max_iterations=1", "--run-dir", os.path.join(w, "kuhn_run")],
                   capture_output=True, check=True, timeout=120)
    subprocess.run([run, os.path.join(cfgs, "smoke.toml"), "--set", "run.max_iterations=1", "--set", "evaluation.eval_every=0",
                    "--set", "evaluation.games=0", "--run-dir", os.path.join(w, "lc_run")], capture_output=True, check=True, timeout=120)
    for name, latest in [("latest_climbs", "../../../../../../../../etc"), ("latest_empty", ""), ("latest_missing", "iter-000099")]:
        d = os.path.join(w, name)
        shutil.copytree(os.path.join(w, "kuhn_run"), d)
        with open(os.path.join(d, "checkpoints", "latest"), "w") as f:
            f.write(latest + ("\n" if latest else ""))


def blas_env():
    """The environment of every case. The LibTorch apps call select_blas_kernels first thing
    (engine/core/resources.h): where OpenBLAS does not know this CPU they set OPENBLAS_CORETYPE
    to the kernels made for its vector units and execute themselves again, loading LibTorch twice
    (about 0.6 s of CPU each time). A case only checks flags and messages: the variable is set here
    as that re-execution would set it (SkylakeX with AVX-512, Haswell with AVX2; a user's value is
    kept), so each case loads LibTorch once (docs/ci.md)."""
    env = dict(os.environ)
    if "OPENBLAS_CORETYPE" not in env:
        try:
            with open("/proc/cpuinfo") as f:
                flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
        except OSError:
            flags = []
        core = "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else ""
        if core:
            env["OPENBLAS_CORETYPE"] = core
    return env


ENV = blas_env()


def execute(case, w):
    try:
        p = subprocess.run(case.argv, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=w, stdin=subprocess.DEVNULL,
                           env=ENV)
        case.got_rc = p.returncode if p.returncode >= 0 else f"signal {-p.returncode}"
        text = p.stderr if p.stderr.strip() else p.stdout
    except subprocess.TimeoutExpired:
        case.got_rc, text = "timeout", ""
    lines = [l for l in text.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l or "stopped" in l]
    case.message = (errs or lines or [""])[0].strip()
    case.full = text
    case.ok = case.got_rc == case.rc and (case.regex is None or re.search(case.regex, text) is not None)
    return case


def md(s):
    s = str(s).replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= 160 else s[:157] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("configs")
    ap.add_argument("work")
    ap.add_argument("--markdown")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", help="these apps only (comma-separated)")
    ap.add_argument("--quick", action="store_true",
                    help="CTest: every flag as in full, every config key with its range bounds only (0 or -1, a huge "
                         "integer, nan; each key kind's type checks are exercised in full only)")
    a = ap.parse_args()
    b, cfgs, w = (os.path.abspath(x) for x in (a.bin, a.configs, a.work))
    torch = all(os.path.exists(os.path.join(b, x)) for x in ("cfr-run", "cfr-eval", "cfr-bench-batch"))
    t0 = time.time()
    setup(b, cfgs, w, torch)
    cases = arena_cases(b, w) + solve_cases(b, w) + exploit_cases(b, w) + plot_cases(b, w)
    if torch:
        cases += eval_cases(b, w) + bench_cases(b, cfgs, w) + run_cases(b, cfgs, w, a.quick)
    else:
        print("sweep: no cfr-run/cfr-eval/cfr-bench-batch (built without LibTorch): their cases are skipped")
    if a.only:
        cases = [c for c in cases if c.app in a.only.split(",")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        cases = list(pool.map(lambda c: execute(c, w), cases))
    bad = [c for c in cases if not c.ok]
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| app | flag / key | value tried | exit | expected | first line of the message |\n")
            f.write("| --- | --- | --- | --- | --- | --- |\n")
            for c in cases:
                exp = f"{c.rc}" + (f" ({c.note})" if c.note else "")
                mark = "" if c.ok else " **DIFFERS**"
                f.write(f"| {c.app} | `{md(c.what)}` | `{md(c.value)}` | {c.got_rc}{mark} | {md(exp)} | {md(c.message)} |\n")
    for c in bad:
        print(f"DIFFERS: {c.app} {c.what} = {c.value!r}: exit {c.got_rc}, expected {c.rc}"
              + (f" matching /{c.regex}/" if c.regex else "") + f"\n    argv: {' '.join(repr(x) if (not x or ' ' in x) else x for x in c.argv)}"
              + f"\n    message: {c.message}")
    print(f"sweep: {len(cases)} cases, {len(cases) - len(bad)} as expected, {len(bad)} differ ({time.time() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
