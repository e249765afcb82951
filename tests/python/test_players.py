"""Players and matches: the bots by name, cfr.match against cfr-arena's report, and Python
callables as players (a batch of views in, actions out)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import cfr
from conftest import build_dir

TIMING = {"seconds", "games_per_second"}


def without_timing(report):
    return {k: v for k, v in report.items() if k not in TIMING}


def test_match_returns_cfr_arenas_report():
    r = cfr.match("heuristic_balanced", "random", games=20, seed=1)
    assert r["games"] == 20 and r["bot0"] == "heuristic_balanced" and r["bot1"] == "random"
    assert r["wins"] + r["draws"] + r["losses"] == 20 and r["duplicate_deals"] is True
    arena = build_dir() / "bin" / "cfr-arena"
    if not arena.exists():
        pytest.skip(f"{arena} is not built")
    out = subprocess.run([str(arena), "--bot0", "heuristic_balanced", "--bot1", "random", "--games", "20", "--seed", "1",
                          "--json"], capture_output=True, text=True, check=True)
    assert without_timing(r) == without_timing(json.loads(out.stdout))


def test_match_options():
    small = {"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5}
    r = cfr.match("heuristic_cautious", "discard_only", games=10, seed=4, rules=small, duplicate=False)
    assert r["games"] == 10 and r["duplicate_deals"] is False
    r = cfr.match("random", "random", games=4, seed=0, max_steps=10)
    assert r["timeouts"] == 4 and r["avg_length"] == 10


def test_a_python_player_wrapping_a_bot_gives_the_bots_report():
    bot = cfr.make_bot("heuristic_balanced")
    seen = []

    def player(views):
        k = len(views.states)
        assert views.observation.shape == (k, 297) and views.observation.dtype == np.float32
        assert views.legal_mask.shape == (k, 22) and views.legal_mask.dtype == np.bool_
        assert views.games.shape == (k,)
        for i, s in enumerate(views.states):
            assert np.array_equal(views.observation[i], s.information_state_tensor())
            assert np.array_equal(views.legal_mask[i], s.legal_actions_mask())
        seen.append(k)
        return [bot.choose_action(s) for s in views.states]

    player.name = "heuristic_balanced"
    mine = cfr.match(player, "heuristic_cautious", games=40, seed=3)
    theirs = cfr.match("heuristic_balanced", "heuristic_cautious", games=40, seed=3)
    assert without_timing(mine) == without_timing(theirs)
    assert max(seen) == 40 and len(seen) > 50  # batches of the games in lockstep
    seen.clear()
    cfr.match(player, "random", games=40, seed=3, parallel=8)
    assert max(seen) == 8


def test_a_python_player_on_either_side_with_numpy_choices():
    rng = np.random.default_rng(0)

    def noise(views):
        return (rng.random(views.legal_mask.shape) * views.legal_mask).argmax(axis=1)

    r = cfr.match("heuristic_balanced", noise, games=40, seed=5)
    assert r["bot1"] == "noise" and r["games"] == 40 and r["win_rate"] >= 0.8


def test_a_python_players_errors_reach_the_caller():
    def raises(views):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        cfr.match(raises, "random", games=2)

    def illegal(views):
        return [99] * len(views.states)

    with pytest.raises(cfr.IllegalActionError, match="player 'illegal' chose action 99 in game 0"):
        cfr.match(illegal, "random", games=2)

    def short(views):
        return []

    with pytest.raises(cfr.InputError, match="must return 2 actions"):
        cfr.match(short, "random", games=2)

    def floats(views):
        return views.legal_mask.argmax(axis=1) + 0.9

    with pytest.raises(cfr.InputError, match="player 'floats' must return integer actions, got float64"):
        cfr.match(floats, "random", games=2)

    def serializes(views):
        views.states[0].serialize()

    with pytest.raises(cfr.InputError, match="cannot be serialized"):
        cfr.match(serializes, "random", games=2)
    with pytest.raises(cfr.InputError, match="a player's name or spec, a cfr.Player or a callable"):
        cfr.match(3, "random", games=2)
    with pytest.raises(cfr.InputError, match="parallel"):
        cfr.match("random", "random", games=2, parallel=0)


def test_heuristic_expert_variants_play_under_their_spec():
    tight = "heuristic_expert?open_margin=8&open_extra=8&free_opens=1"
    r = cfr.match(tight, "heuristic_expert", games=40, seed=3)
    assert r["bot0"] == tight and r["games"] == 40
    assert r["opened_per_game0"] < r["opened_per_game1"] - 0.5  # the tight variant opens fewer
    with pytest.raises(cfr.InputError, match="unknown key 'bogus'"):
        cfr.make_bot("heuristic_expert?bogus=1")


def test_move_attribution_hands_the_chosen_moves_to_the_referee():
    # heuristic_balanced with every move handed to heuristic_expert, against heuristic_expert on
    # duplicate deals: the same deterministic player on both seats, so exactly level; unchanged it
    # loses by far; cap3 hands over some openings and no other move.
    import pathlib
    script = pathlib.Path(__file__).resolve().parents[2] / "bench" / "move_attribution.py"
    out = subprocess.run([sys.executable, str(script), "--player", "heuristic_balanced", "--referee", "heuristic_expert",
                          "--opponent", "heuristic_expert", "--variants", "all", "cap3", "draw", "--games", "40", "--seed", "5"],
                         capture_output=True, text=True, check=True)
    rows = {r["variant"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert set(rows) == {"unchanged", "all", "cap3", "draw"}
    assert rows["unchanged"]["score_diff"] < -10 and rows["unchanged"]["replaced_share"] == 0
    assert rows["all"]["score_diff"] == 0 and rows["all"]["se"] == 0 and rows["all"]["replaced_share"] > 0.2
    assert 0 < rows["cap3"]["replaced_share"] < rows["all"]["replaced_share"]
    assert 0 < rows["draw"]["replaced_share"] < rows["all"]["replaced_share"]


def test_choose_actions_over_a_generator_equals_over_a_list():
    # A generator's states are fresh objects, freed as it goes on: the player must decide on copies
    # (it once kept pointers into them, then released the GIL: a use after free).
    game = cfr.load_game("lost_cities")
    p = cfr.load_player("heuristic_balanced")
    listed = [game.new_initial_state(seed=i) for i in range(64)]
    expected = list(p.choose_actions(listed))
    assert len(set(expected)) > 1  # the deals differ: so do the moves
    got = list(p.choose_actions(game.new_initial_state(seed=i) for i in range(64)))
    assert got == expected
    assert [p.choose_action(s) for s in listed] == expected
