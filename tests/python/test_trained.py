"""Trained players from Python (docs/python.md "Trained players"): cfr.load_player makes any player
cfr-arena makes (checkpoint:, search:, the bots); cfr.match plays them inside C++ with cfr-arena's
report; VectorEnv's opponent can be one, deciding every slot where it moves in one forward; bad
specs are InputErrors naming the spec."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import cfr
from conftest import REPO, build_dir

pytestmark = pytest.mark.skipif(not cfr.TRAINED_PLAYERS, reason="the module was built without LibTorch")

LEAGUE = "checkpoint:models/lost-cities-league"
MMD = "checkpoint:models/lost-cities-mmd"
TIMING = {"seconds", "games_per_second"}


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # the specs name the shipped models relative to the repository


def without_timing(report):
    return {k: v for k, v in report.items() if k not in TIMING}


def arena_report(*args):
    arena = build_dir() / "bin" / "cfr-arena"
    if not arena.exists():
        pytest.skip(f"{arena} is not built")
    env = dict(os.environ)
    if cfr.blas_core():  # the same OpenBLAS kernels as this process: the same sums, the same moves
        env["OPENBLAS_CORETYPE"] = cfr.blas_core()
    out = subprocess.run([str(arena), *args, "--json"], capture_output=True, text=True, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_load_player_makes_a_batched_network():
    p = cfr.load_player(LEAGUE)
    assert isinstance(p, cfr.Player) and p.name == LEAGUE and p.spec == LEAGUE and p.batched
    assert p.game == cfr.load_game("lost_cities") and repr(p) == f"<cfr.Player {LEAGUE}>"
    states = [cfr.load_game("lost_cities").new_initial_state(seed=s) for s in range(8)]
    for s in states[4:]:  # some states later in a game, player 1 to move
        s.apply_action(s.legal_actions()[0])
        s.apply_action(s.legal_actions()[-1])
    actions = p.choose_actions(states)
    assert actions.dtype == np.int64 and actions.shape == (8,)
    assert all(a in s.legal_actions() for a, s in zip(actions, states))
    assert [p.choose_action(s) for s in states] == list(actions)  # greedy: the same move alone
    bot = cfr.load_player("heuristic_balanced")
    assert not bot.batched and bot.name == "heuristic_balanced"
    assert list(bot.choose_actions(states)) == [cfr.make_bot("heuristic_balanced").choose_action(s) for s in states]


@pytest.mark.parametrize("side", [0, 1])
def test_match_plays_a_checkpoint_as_cfr_arena_does(side):
    arena = arena_report("--bot0", LEAGUE, "--bot1", "heuristic_balanced", "--games", "20", "--seed", "3")
    assert arena["bot0"] == LEAGUE and arena["games"] == 20
    by_spec = cfr.match(LEAGUE, "heuristic_balanced", games=20, seed=3)
    assert without_timing(by_spec) == without_timing(arena)
    p = cfr.load_player(LEAGUE)
    if side == 0:
        assert without_timing(cfr.match(p, "heuristic_balanced", games=20, seed=3)) == without_timing(arena)
    else:  # the same deals from the other side: the mirror of the report
        r = cfr.match("heuristic_balanced", p, games=20, seed=3)
        assert r["bot1"] == LEAGUE and r["games"] == 20
        assert (r["wins"], r["draws"], r["losses"]) == (arena["losses"], arena["draws"], arena["wins"])


def test_a_callable_over_choose_actions_gives_the_same_report():
    p = cfr.load_player(MMD)
    batches = []

    def player(views):
        batches.append(len(views.states))
        return p.choose_actions(views)

    player.name = MMD
    mine = cfr.match(player, "heuristic_cautious", games=16, seed=2)
    theirs = cfr.match(p, "heuristic_cautious", games=16, seed=2)
    assert without_timing(mine) == without_timing(theirs)
    assert max(batches) == 16  # the views of every game in lockstep: one forward


def test_the_search_player_plays_as_cfr_arena_plays_it():
    spec = "search:models/lost-cities-league?k=2&n=2&cap=40"
    arena = arena_report("--bot0", spec, "--bot1", "heuristic_balanced", "--games", "2", "--seed", "5")
    r = cfr.match(spec, "heuristic_balanced", games=2, seed=5)
    assert r["bot0"] == spec and without_timing(r) == without_timing(arena)
    assert cfr.load_player(spec).batched


def mirror_against(env, game, player, steps, rng):
    """Steps env with random legal moves and replays every slot by hand, the opponent's moves from
    player.choose_action on the single game: the same trajectories, rewards and resets."""
    n = env.num_envs
    ts = env.reset()
    seeds, seats = env.deal_seeds(), env.agent_seats()

    def opponent_moves(s, seat):
        while not s.is_terminal() and s.current_player() != seat:
            s.apply_action(player.choose_action(s))

    def fresh(i):
        s = game.new_initial_state(seed=seeds[i])
        opponent_moves(s, seats[i])
        return s

    mirrors = [fresh(i) for i in range(n)]
    finished = 0
    for _ in range(steps):
        for i, s in enumerate(mirrors):
            assert ts.current_player[i] == s.current_player() == seats[i]
            assert np.array_equal(ts.observation[i], s.information_state_tensor())
            assert np.array_equal(ts.legal_mask[i], s.legal_actions_mask())
        actions = np.array([rng.choice(s.legal_actions()) for s in mirrors], dtype=np.int64)
        ts = env.step(actions)
        new_seeds, new_seats = env.deal_seeds(), env.agent_seats()
        for i, s in enumerate(mirrors):
            s.apply_action(int(actions[i]))
            opponent_moves(s, seats[i])
            assert ts.done[i] == s.is_terminal()
            assert ts.reward[i] == (s.player_return(seats[i]) if s.is_terminal() else 0.0)
            if s.is_terminal():
                finished += 1
                seeds[i], seats[i] = new_seeds[i], new_seats[i]
                mirrors[i] = fresh(i)
            else:
                assert new_seeds[i] == seeds[i]
    return finished


def test_vector_env_against_a_checkpoint_matches_single_games():
    game = cfr.load_game("lost_cities")
    player = cfr.load_player(MMD)
    env = cfr.VectorEnv(game, 6, seed=9, opponent=MMD, agent_seat=-1)
    assert "opponent=" + MMD in repr(env)
    assert mirror_against(env, game, player, 160, np.random.default_rng(4)) >= 3

    # a cfr.Player as the opponent, two threads: the same games
    def run(opponent, threads):
        env = cfr.VectorEnv(game, 16, seed=2, opponent=opponent, agent_seat=-1, threads=threads)
        ts, rng, out = env.reset(), np.random.default_rng(0), []
        for _ in range(120):
            ts = env.step((rng.random(ts.legal_mask.shape) * ts.legal_mask).argmax(axis=1))
            out.append((ts.observation.copy(), ts.reward.copy(), ts.done.copy()))
        return out, env.episodes()

    by_spec, episodes = run(MMD, 1)
    by_player, _ = run(player, 2)
    assert sum(episodes) >= 4
    assert all(np.array_equal(a, b) for x, y in zip(by_spec, by_player) for a, b in zip(x, y))


def test_bad_specs_are_input_errors_naming_the_spec(tmp_path):
    fake = tmp_path / "fake"
    shutil.copytree(REPO / "models" / "lost-cities-mmd", fake)
    (fake / "nets.pt").write_bytes(b"not a network")
    (fake / "manifest.json").unlink()
    bad = {
        "grandmaster": "heuristic_balanced",  # an unknown bot: the valid names listed
        "checkpoint:/nonexistent/run": "no such checkpoint",
        "checkpoint:docs": "not a checkpoint",
        "checkpoint:README.md": "",
        f"checkpoint:{fake}": "",
        "search:models/lost-cities-league?k=banana": "k",
        "search:/nonexistent/run?k=3": "",
    }
    for spec, detail in bad.items():
        with pytest.raises(cfr.InputError) as e:
            cfr.load_player(spec)
        assert spec in str(e.value) and detail in str(e.value), str(e.value)
        with pytest.raises(cfr.InputError, match="grandmaster" if spec == "grandmaster" else "checkpoint|search"):
            cfr.match(spec, "random", games=2)
        if ":" in spec:
            with pytest.raises(cfr.InputError) as e:
                cfr.VectorEnv("lost_cities", 2, opponent=spec)
            assert spec in str(e.value)
    with pytest.raises(cfr.InputError, match="players play Lost Cities, not kuhn"):
        cfr.load_player(LEAGUE, cfr.load_game("kuhn"))
    small = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    with pytest.raises(cfr.InputError, match="other Lost Cities rules"):
        cfr.load_player(MMD, small)
    p = cfr.load_player(MMD)
    with pytest.raises(cfr.InputError, match="other rules"):
        cfr.match(p, "random", games=2, rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    with pytest.raises(cfr.InputError, match="has no opponent"):
        cfr.VectorEnv("kuhn", 2, opponent=p)
    over = cfr.load_game("lost_cities").new_initial_state(seed=1)
    while not over.is_terminal():
        over.apply_action(over.legal_actions()[0])
    with pytest.raises(cfr.InputError, match="game is over"):
        p.choose_action(over)
    with pytest.raises(cfr.InputError, match="cfr.State"):
        p.choose_actions([1, 2])
    with pytest.raises(cfr.InputError, match="rng_seeds"):
        p.choose_actions([cfr.load_game("lost_cities").new_initial_state(seed=1)], rng_seeds=[1, 2])
