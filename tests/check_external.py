#!/usr/bin/env python3
"""check_external.py BIN_DIR SOURCE_DIR WORK_DIR CASE: one check of the external-player protocol
(docs/external-players.md) through cfr-arena / cfr-ladder. Prints "ok: CASE ..." and exits 0, or
"FAIL: ..." and exits 1. Every case checks the exit code and the values it is about; a compared
key that is missing fails.

Cases:
  same_as_builtin   the Python discard_only gives exactly the built-in bot's report, 100 games,
                    one game at a time and multiplexed
  reproducible      two external players in one match (two processes), twice: same reports
  ladder            an external player in a cfr-ladder round robin
  events            8 games in flight: the opponent's moves as told add up to each decide's view
  illegal malformed noaction exit crash timeout
                    one fault at the 5th decision, one game at a time: exactly 1 forfeit with its
                    cause, the match goes on to its 10 games, the player restarted cleanly
  crash_multiplexed a crash with 4 games in flight: exactly those 4 forfeited
  skip_one          one answer missing from a round of 4: only that game forfeited, no restart
  stop_reading      a player that stops reading while 64 games' decisions fill the pipe
  stop_on_fault     --stop-on-fault: exit 5, the player and its line named, the report stopped
  bad_hello silent_hello not_found
                    exit 2 naming the command and what is wrong
  deep_hello        a ready whose "version" is nested 200,000 deep: exit 2 with a clear error (no crash)
  children          a player that starts a program and then hangs: stopped at the move timeout, the
                    program it started is gone too (the player's process group is killed)
  stderr_flood      a player that writes to its stderr without end: killed at --player-log-mib, its
                    game forfeited with that cause, its log no larger than the limit
  spam              1000 answers for a game nobody plays: ignored, this process's stderr names ten
                    of them and the count, the match unharmed
"""
import time
import json
import os
import subprocess
import sys

bin_dir, src, work, case = sys.argv[1:5]
arena = os.path.join(bin_dir, "cfr-arena")
ladder = os.path.join(bin_dir, "cfr-ladder")
work = os.path.join(work, "external_" + case)
os.makedirs(work, exist_ok=True)
faulty = f"external:python3 {src}/tests/data/external/faulty_player.py"
discard = f"external:python3 {src}/scripts/players/discard_only.py"
rand = f"external:python3 {src}/scripts/players/random_player.py"
bad = []


def run(args, want_rc=0):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != want_rc:
        print(f"FAIL: {case}: exit {p.returncode}, expected {want_rc}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
        sys.exit(1)
    return p


def match(bot0, bot1, *extra, want_rc=0, games=10):
    p = run([arena, "--bot0", bot0, "--bot1", bot1, "--games", str(games), "--seed", "7", "--json",
             "--player-logs", work, *extra], want_rc)
    return json.loads(p.stdout), p.stderr


def need(cond, what):
    if not cond:
        bad.append(what)


def same_report(a, b, what):
    skip = {"bot0", "bot1", "seconds", "games_per_second"}
    for k in sorted(set(a) | set(b)):
        if k in skip:
            continue
        if k not in a or k not in b:
            bad.append(f"{what}: key {k} missing on one side")
        elif a[k] != b[k]:
            bad.append(f"{what}: {k} {a[k]} vs {b[k]}")


def one_fault(mode, cause_words, parallel=1, expect_forfeits=1, n=5, extra=()):
    marker = os.path.join(work, "marker")
    if os.path.exists(marker):
        os.remove(marker)
    r, err = match(f"{faulty} {mode} {n} {marker}", "heuristic_balanced", "--parallel", str(parallel), *extra)
    need(r.get("games") == 10, f"games {r.get('games')} (the match must go on to 10)")
    need(r.get("forfeits0") == expect_forfeits, f"forfeits0 {r.get('forfeits0')}, expected {expect_forfeits}")
    need(r.get("forfeits1") == 0, f"forfeits1 {r.get('forfeits1')}")
    faults = r.get("faults", [])
    need(len(faults) == expect_forfeits, f"{len(faults)} faults listed")
    for f in faults:
        need(f.get("player") == 0, f"fault of player {f.get('player')}")
        for w in cause_words:
            need(w in f.get("cause", ""), f"cause {f.get('cause')!r} lacks {w!r}")
    need(r.get("wins", -1) + r.get("draws", -1) + r.get("losses", -1) == 10, "wins + draws + losses != games")
    need(r.get("stopped") is False, "stopped")
    # The faulty player writes to its stderr: it is in the log file.
    # (A log past half the limit moves to LOG.1 when the player starts again.)
    logs = [f for f in os.listdir(work) if f.startswith("external-") and f.endswith(".log")]
    text = "".join(open(os.path.join(work, f), errors="replace").read() for f in os.listdir(work) if logs and f.startswith(logs[0]))
    need(len(logs) == 1 and "committing " + mode in text, f"log file with the player's stderr: {logs}")
    return r, err


if case == "same_as_builtin":
    for par in ("1", "256"):
        ext, _ = match(discard, "heuristic_balanced", "--parallel", par, games=100)
        ref, _ = match("discard_only", "heuristic_balanced", "--parallel", par, games=100)
        need(ext.get("games") == 100 and ext.get("forfeits0") == 0, f"external: {ext.get('games')} games, {ext.get('forfeits0')} forfeits")
        same_report(ext, ref, f"parallel {par}")
    need(ext.get("decisions0", 0) > 5000, f"decisions0 {ext.get('decisions0')}")
elif case == "reproducible":
    a, _ = match(rand, discard, games=20)
    b, _ = match(rand, discard, games=20, )
    need(a.get("games") == 20 and a.get("forfeits0") == 0 and a.get("forfeits1") == 0, "forfeits or missing games")
    same_report(a, b, "second run")
    need(a.get("avg_score_diff", 0) != 0, "random vs discard_only: no score difference at all")
elif case == "events":
    r, _ = match(f"{faulty} none 0", "heuristic_balanced", "--parallel", "8", games=16)
    need(r.get("games") == 16 and r.get("forfeits0") == 0, f"{r.get('games')} games, {r.get('forfeits0')} forfeits")
    log = open(os.path.join(work, [f for f in os.listdir(work) if f.endswith(".log")][0])).read()
    need("MISMATCH" not in log, "a decide disagrees with the moves told")
    need(f"views consistent in {r.get('decisions0')} decisions" in log, "the player did not report its checks")
elif case == "ladder":
    p = run([ladder, "random", discard, "heuristic_balanced", "--games", "20", "--seed", "1", "--player-logs", work,
             "--json", os.path.join(work, "ladder.json")])
    j = json.load(open(os.path.join(work, "ladder.json")))
    need(len(j.get("pairs", [])) == 3, f"{len(j.get('pairs', []))} pairs")
    need(all(pr.get("forfeits0") == 0 and pr.get("forfeits1") == 0 for pr in j.get("pairs", [])), "forfeits in the ladder")
    need(discard in [r.get("name") for r in j.get("ratings", [])], "the external player is not rated")
elif case in ("illegal", "malformed", "noaction"):
    words = {"illegal": ["illegal action 99", '"action": 99'], "malformed": ["malformed answer", "this is not json"],
             "noaction": ["no integer \"action\"", '"move"']}[case]
    one_fault(case, words)
    # The player still knows the game: it is told it ended, forfeited, as a loss.
    log = open(os.path.join(work, [f for f in os.listdir(work) if f.endswith(".log")][0])).read()
    need(": forfeit, result loss" in log, "the player was not told the forfeited game's end")
elif case == "exit":
    one_fault("exit", ["exited with status 3"])
elif case == "crash":
    one_fault("crash", ["killed by signal 11"])
elif case == "crash_multiplexed":
    r, _ = one_fault("crash", ["killed by signal 11"], parallel=4, expect_forfeits=4, n=10)
    need(sorted(f["game"] for f in r.get("faults", [])) == [0, 1, 2, 3], f"forfeited games {[f.get('game') for f in r.get('faults', [])]}")
elif case == "timeout":
    one_fault("timeout", ["no answer within the move timeout of 0.5 s", "stopped"], extra=("--move-timeout", "0.5"))
elif case == "skip_one":
    r, err = one_fault("skip_one", ["no answer within the move timeout of 0.5 s"], parallel=4, extra=("--move-timeout", "0.5"))
    need("was stopped" not in r["faults"][0]["cause"] if r.get("faults") else False, "the player was restarted")
elif case == "stop_reading":
    marker = os.path.join(work, "marker")
    if os.path.exists(marker):
        os.remove(marker)
    r, _ = match(f"{faulty} stop_reading 1 {marker}", "heuristic_balanced", "--parallel", "64", "--move-timeout", "0.5", games=64)
    need(r.get("games") == 64 and r.get("forfeits0") == 64, f"{r.get('games')} games, {r.get('forfeits0')} forfeits (expected 64, 64)")
    need(all("stopped reading its input" in f.get("cause", "") for f in r.get("faults", [])) and r.get("faults"), "cause")
elif case == "stop_on_fault":
    r, err = match(f"{faulty} illegal 5", "random", "--stop-on-fault", want_rc=5)
    need(r.get("stopped") is True and r.get("forfeits0") == 1, f"stopped {r.get('stopped')}, forfeits {r.get('forfeits0')}")
    need(r.get("games", 99) < 10, f"{r.get('games')} games played after the stop")
    need(f"{faulty} illegal 5 forfeits game" in err and '"action": 99' in err, f"stderr does not name the player and its line: {err}")
elif case in ("bad_hello", "silent_hello", "not_found"):
    cmd = {"bad_hello": f"{faulty} bad_hello 1", "silent_hello": f"{faulty} silent_hello 1", "not_found": "external:no-such-player-xyz --flag"}[case]
    words = {"bad_hello": "answered the hello with 'hello yourself'", "silent_hello": "no answer to the hello within 0.5 s",
             "not_found": "'no-such-player-xyz' is not an executable on PATH"}[case]
    p = run([arena, "--bot0", cmd, "--bot1", "random", "--games", "2", "--start-timeout", "0.5", "--player-logs", work], want_rc=2)
    need(cmd in p.stderr and words in p.stderr, f"stderr: {p.stderr!r}")
elif case == "deep_hello":
    p = run([arena, "--bot0", f"{faulty} deep_hello 1", "--bot1", "random", "--games", "2", "--player-logs", work], want_rc=2)
    need('"version" that is not an integer' in p.stderr and len(p.stderr) < 4000, f"stderr: {p.stderr[:500]!r}")
elif case == "children":
    marker = os.path.join(work, "marker")
    for f in (marker, marker + ".child"):
        if os.path.exists(f):
            os.remove(f)
    one_fault("children", ["no answer within the move timeout of 0.5 s", "stopped"], extra=("--move-timeout", "0.5"))
    pid = int(open(marker + ".child").read())
    gone = False
    for _ in range(100):  # killed with the group; reaped by whoever inherited it
        try:
            os.kill(pid, 0)
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            gone = stat[0] == "Z"
        except (ProcessLookupError, FileNotFoundError):
            gone = True
        if gone:
            break
        time.sleep(0.05)
    if not gone:
        os.kill(pid, 9)
    need(gone, f"the program the player started (pid {pid}) outlived it")
elif case == "stderr_flood":
    r, err = one_fault("stderr_flood", ["reached the limit of 1048576 bytes"], extra=("--player-log-mib", "1"))
    logs = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("external-")]
    need(all(os.path.getsize(f) <= (1 << 20) + 4096 for f in logs), f"log sizes {[os.path.getsize(f) for f in logs]}")
elif case == "spam":
    r, err = match(f"{faulty} spam 5", "heuristic_balanced")
    need(r.get("games") == 10 and r.get("forfeits0") == 0, f"{r.get('games')} games, {r.get('forfeits0')} forfeits")
    shown = err.count("ignored an answer for a game that awaits none")
    need(shown == 10 and "ignored 1000 answers in all" in err, f"{shown} warnings shown; stderr tail {err[-300:]!r}")
else:
    print(f"FAIL: unknown case {case}")
    sys.exit(1)

if bad:
    print(f"FAIL: {case}: " + "; ".join(bad))
    sys.exit(1)
print(f"ok: {case}")
