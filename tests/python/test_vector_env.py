"""VectorEnv against single games: same deal seeds give the same trajectories (observations,
masks, rewards, resets), the built-in opponent moves as the bot does, truncation, determinism
whatever the thread count."""
import random

import numpy as np
import pytest

import cfr


def mirror_check(env, game, steps, rng, opponent=None):
    """Steps env with random legal actions and replays every slot with the single-game API."""
    n = env.num_envs
    ts = env.reset()
    seeds = env.deal_seeds()
    bot = cfr.make_bot(opponent, game) if opponent not in (None, "random") else None
    seats = env.agent_seats()

    def fresh(i):
        s = game.new_initial_state(seed=seeds[i])
        if opponent is not None:
            opponent_moves(s, seats[i])
        return s

    def opponent_moves(s, seat):
        while not s.is_terminal() and s.current_player() != seat:
            s.apply_action(bot.choose_action(s))

    mirrors = [fresh(i) for i in range(n)]
    finished = 0
    for _ in range(steps):
        for i, s in enumerate(mirrors):
            p = s.current_player()
            assert ts.current_player[i] == p
            assert np.array_equal(ts.observation[i], s.information_state_tensor(p))
            assert np.array_equal(ts.legal_mask[i], s.legal_actions_mask())
        actions = np.array([rng.choice(s.legal_actions()) for s in mirrors], dtype=np.int64)
        ts = env.step(actions)
        new_seeds, new_seats = env.deal_seeds(), env.agent_seats()
        for i, s in enumerate(mirrors):
            seat = s.current_player() if opponent is None else seats[i]
            s.apply_action(int(actions[i]))
            if opponent is not None:
                opponent_moves(s, seats[i])
            assert ts.done[i] == s.is_terminal()
            assert ts.reward[i] == (s.player_return(seat) if s.is_terminal() else 0.0)
            assert not ts.truncated[i]
            if s.is_terminal():
                finished += 1
                assert new_seeds[i] != seeds[i]
                seeds[i], seats[i] = new_seeds[i], new_seats[i]
                mirrors[i] = fresh(i)
            else:
                assert new_seeds[i] == seeds[i]
    return finished


@pytest.mark.parametrize("name,steps", [("lost_cities", 400), ("kuhn", 40), ("leduc", 60)])
def test_self_play_matches_single_games_with_the_same_seeds(name, steps):
    game = cfr.load_game(name)
    env = cfr.VectorEnv(game, 6, seed=11)
    finished = mirror_check(env, game, steps, random.Random(1))
    assert finished >= 6  # automatic resets were exercised


def test_heuristic_opponent_moves_inside_cpp_as_the_bot_does():
    game = cfr.load_game("lost_cities")
    env = cfr.VectorEnv(game, 4, seed=5, opponent="heuristic_balanced", agent_seat=-1)
    finished = mirror_check(env, game, 250, random.Random(2), opponent="heuristic_balanced")
    assert finished >= 4


def test_the_agent_always_moves_in_its_seat():
    for name in ("kuhn", "leduc", "lost_cities"):
        for seat in (0, 1):
            env = cfr.VectorEnv(name, 16, seed=3, opponent="random", agent_seat=seat)
            ts = env.reset()
            rng = np.random.default_rng(0)
            total_done = 0
            for _ in range(300):
                assert np.all(ts.current_player == seat)
                assert env.agent_seats() == [seat] * 16
                ts = env.step((rng.random(ts.legal_mask.shape) * ts.legal_mask).argmax(axis=1))
                total_done += ts.done.sum()
                assert np.all(ts.reward[~ts.done] == 0)
            assert total_done > 0
        alt = cfr.VectorEnv(name, 4, seed=3, opponent="random", agent_seat=-1)
        alt.reset()
        assert alt.agent_seats() == [0, 1, 0, 1]


def test_small_rules_shapes():
    g = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    env = cfr.VectorEnv(g, 3, seed=0)
    ts = env.reset()
    assert ts.observation.shape == (3, 177) and ts.legal_mask.shape == (3, 14)
    assert ts.observation.dtype == np.float32 and ts.legal_mask.dtype == np.bool_
    assert ts.reward.dtype == np.float32 and ts.current_player.dtype == np.int32
    assert env.observation_size == 177 and env.num_actions == 14 and len(env) == 3 and env.game == g
    assert isinstance(ts, cfr.TimeStep) and ts._fields == (
        "observation", "legal_mask", "reward", "done", "truncated", "current_player")


def test_max_steps_truncates_and_resets():
    env = cfr.VectorEnv("lost_cities", 2, seed=0, max_steps=5)
    ts = env.reset()
    seeds = env.deal_seeds()
    for k in range(5):
        assert not ts.done.any()
        ts = env.step(ts.legal_mask.argmax(axis=1))
    assert ts.done.all() and ts.truncated.all()
    assert env.episodes() == [1, 1] and env.deal_seeds() != seeds


def test_deterministic_whatever_the_thread_count():
    def run(threads, seed=7):
        env = cfr.VectorEnv("lost_cities", 64, seed=seed, threads=threads, opponent="heuristic_noisy")
        ts = env.reset()
        rng = np.random.default_rng(0)
        rewards = []
        for _ in range(200):
            ts = env.step((rng.random(ts.legal_mask.shape) * ts.legal_mask).argmax(axis=1))
            rewards.append(ts.reward.copy())
        return ts.observation, np.array(rewards)

    obs1, r1 = run(1)
    obs3, r3 = run(3)
    assert np.array_equal(obs1, obs3) and np.array_equal(r1, r3)
    obs_other, r_other = run(1, seed=8)
    assert not np.array_equal(obs1, obs_other)


def test_reset_deals_new_games_and_episodes_count():
    env = cfr.VectorEnv("kuhn", 3, seed=0)
    env.reset()
    first = env.deal_seeds()
    assert env.episodes() == [0, 0, 0]
    env.reset()
    assert env.episodes() == [1, 1, 1] and env.deal_seeds() != first
    assert "cfr.VectorEnv kuhn n=3" in repr(env)


def test_n_over_the_limit_is_refused_before_any_allocation():
    # 10**7 games once reserved about 9 GB (an OOM kill); the limit is 2**20, named in the error.
    for n in (10**7, 2**20 + 1):
        with pytest.raises(cfr.InputError, match=rf"n={n} is over the limit of 1048576"):
            cfr.VectorEnv("lost_cities", n, seed=0)
    assert cfr.VectorEnv("kuhn", 2**10, seed=0).reset().observation.shape[0] == 2**10
