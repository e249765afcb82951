"""cfr.exploitability and cfr.solve (docs/python.md "Exact solvers and exploitability") against
the known values of ../shared/reference/small-games.md and cfr-exploit."""
import json
import subprocess

import pytest

import cfr
from conftest import build_dir


def uniform_row(state):
    legal = state.legal_actions()
    return {a: 1.0 / len(legal) for a in legal}


def test_uniform_kuhn_as_a_callable():
    r = cfr.exploitability(cfr.load_game("kuhn"), uniform_row)
    assert r["nash_conv"] == pytest.approx(0.916667, abs=1e-6)
    assert r["best_response_values"] == pytest.approx([0.5, 0.416667], abs=1e-6)
    assert r["exploitability"] == pytest.approx(r["nash_conv"] / 2)


def test_uniform_leduc_as_a_dict_of_lists():
    game = cfr.load_game("leduc")
    rows = {}

    def record(state):  # the callable's rows, handed back as a dict: the same figures
        legal = state.legal_actions()
        row = [1.0 / len(legal) if a in legal else 0.0 for a in range(game.num_distinct_actions())]
        rows[state.information_state_string(state.current_player())] = row
        return row

    a = cfr.exploitability(game, record)
    b = cfr.exploitability(game, rows)
    assert a["nash_conv"] == pytest.approx(4.747222, abs=1e-6)
    assert b == a


def test_first_legal_leduc():
    r = cfr.exploitability(cfr.load_game("leduc"), lambda s: {s.legal_actions()[0]: 1.0})
    assert r["nash_conv"] == pytest.approx(2.0, abs=1e-9)


def test_solve_kuhn_reaches_the_game_value():
    game = cfr.load_game("kuhn")
    policy = cfr.solve(game, "cfr", 300)
    r = cfr.exploitability(game, policy)
    assert r["on_policy_values"][0] == pytest.approx(-1 / 18, abs=1e-3)
    assert r["exploitability"] < 0.05


def test_solve_equals_cfr_solve(tmp_path):
    game = cfr.load_game("leduc")
    policy = cfr.solve(game, "cfr+", 20)
    out = tmp_path / "policy.json"
    subprocess.run([str(build_dir() / "bin" / "cfr-solve"), "--game", "leduc", "--algo", "cfr+", "--iterations", "20",
                    "--seed", "0", "--out", str(out)], check=True, capture_output=True)
    exact = json.loads(subprocess.run([str(build_dir() / "bin" / "cfr-exploit"), str(out), "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    assert cfr.exploitability(game, policy)["nash_conv"] == pytest.approx(exact["nash_conv"], abs=1e-9)


def test_bad_policies_name_what_is_wrong():
    game = cfr.load_game("kuhn")
    with pytest.raises(cfr.InputError, match="no row for information state"):
        cfr.exploitability(game, {})
    with pytest.raises(cfr.InputError, match="probabilities; the game has 2 actions"):
        cfr.exploitability(game, lambda s: [1.0])
    with pytest.raises(cfr.InputError, match="policy"):
        cfr.exploitability(game, lambda s: [0.7, 0.7])
    with pytest.raises(cfr.InputError, match="too large to enumerate"):
        cfr.exploitability(cfr.load_game("lost_cities"), {})
    with pytest.raises(cfr.InputError, match="cfr\\+"):
        cfr.solve(game, "nope", 1)
