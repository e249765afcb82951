"""The module against the engine's golden data (tests/golden/README.md): every transcript replayed
through the Python API — every legal-action count, every action, the final totals and returns —
the reference's encodings, the deterministic bots' moves, and the module's own transcripts read
back by the C++ replayer (cfr-arena --replay)."""
import gzip
import json
import random
import subprocess

import numpy as np
import pytest

import cfr
from conftest import GOLDEN, build_dir, random_playout

SMALL = {"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5}


def read_lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("file", ["games.jsonl.gz", "games_small_rules.jsonl"])
def test_every_golden_game_replays_with_its_counts_and_totals(file):
    games = read_lines(GOLDEN / file)
    assert len(games) == (120 if file.endswith(".gz") else 20)
    steps = 0
    for g in games:
        game = cfr.load_game("lost_cities", rules=g["rules"])
        s = game.new_initial_state(deck=g["deck"])
        for i, a in enumerate(g["actions"]):
            legal = s.legal_actions()
            if "legal_counts" in g:
                assert len(legal) == g["legal_counts"][i], f"game {g['game']} step {i}"
            assert a in legal, f"game {g['game']} step {i}: {a} not in {legal}"
            s.apply_action(a)
            steps += 1
        assert s.is_terminal() == g["terminal"], f"game {g['game']}"
        assert list(s.scores()) == g["totals"], f"game {g['game']}"
        assert s.returns() == [g["totals"][0] - g["totals"][1], g["totals"][1] - g["totals"][0]]
        line = json.loads(s.serialize())
        assert line["deck"] == g["deck"] and line["actions"] == g["actions"] and line["totals"] == g["totals"]
        assert game.deserialize_state(s.serialize()) == s
    if file.endswith(".gz"):
        assert steps == 71230  # what cfr-arena --replay reports for this file (tests/CMakeLists.txt)
    else:
        assert steps == 940


@pytest.mark.parametrize("games_file,enc_file,rules",
                         [("games.jsonl.gz", "encodings.jsonl.gz", {}),
                          ("games_small_rules.jsonl", "encodings_small_rules.jsonl.gz", SMALL)])
def test_information_state_tensors_are_the_references(games_file, enc_file, rules):
    games = {g["game"]: g for g in read_lines(GOLDEN / games_file)}
    records = read_lines(GOLDEN / enc_file)
    game = cfr.load_game("lost_cities", rules=rules)
    for r in records:
        g = games[r["game"]]
        s = game.new_initial_state(deck=g["deck"])
        for a in g["actions"][: r["step"]]:
            s.apply_action(a)
        got = s.information_state_tensor(r["observer"])
        np.testing.assert_allclose(got, np.array(r["features"], dtype=np.float32), atol=1e-6,
                                   err_msg=f"game {r['game']} step {r['step']} observer {r['observer']}")
    assert len(records) >= 36


DETERMINISTIC = {"discard_only", "heuristic_balanced", "heuristic_aggressive", "heuristic_cautious"}


def test_deterministic_bots_choose_the_recorded_moves():
    checked = 0
    bots = {}
    for g in read_lines(GOLDEN / "games.jsonl.gz"):
        game = cfr.load_game("lost_cities", rules=g["rules"])
        s = game.new_initial_state(deck=g["deck"])
        for a in g["actions"]:
            name = g.get(f"bot{s.current_player()}")
            if name in DETERMINISTIC:
                bot = bots.setdefault(name, cfr.make_bot(name, game))
                assert bot.deterministic
                assert bot.choose_action(s) == a
                checked += 1
            s.apply_action(a)
    assert checked > 10000


def test_the_modules_transcripts_replay_in_cfr_arena(tmp_path):
    arena = build_dir() / "bin" / "cfr-arena"
    if not arena.exists():
        pytest.skip(f"{arena} is not built")
    game = cfr.load_game("lost_cities")
    rng = random.Random(3)
    lines = []
    for seed in range(10):
        s = game.new_initial_state(seed=seed)
        random_playout(s, rng)
        line = json.loads(s.serialize())
        line["game"] = seed
        lines.append(json.dumps(line))
    path = tmp_path / "module.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([str(arena), "--replay", str(path), "--quiet"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "replayed 10 games" in out.stdout + out.stderr
