"""The game API (OpenSpiel's vocabulary) on every registered game: legal actions and masks,
returns, tensors, clones, serialization, resampling, chance nodes, decks and seeds."""
import copy
import json
import pickle
import random

import numpy as np
import pytest

import cfr
from conftest import random_playout


def test_every_registered_game_loads():
    assert cfr.registered_games() == ["lost_cities", "kuhn", "leduc"]
    for name in cfr.registered_games():
        g = cfr.load_game(name)
        assert g.name == name
        assert g.num_players() == 2
        assert g.information_state_tensor_shape() == [g.information_state_tensor_size()]


def test_sizes_are_the_engines():
    lc = cfr.load_game("lost_cities")
    assert lc.information_state_tensor_size() == 297
    assert lc.num_distinct_actions() == 22
    assert not lc.is_enumerable
    assert cfr.load_game("kuhn").information_state_tensor_size() == 11
    assert cfr.load_game("kuhn").num_distinct_actions() == 2
    assert cfr.load_game("leduc").information_state_tensor_size() == 24
    assert cfr.load_game("leduc").num_distinct_actions() == 3
    assert cfr.load_game("leduc").is_enumerable
    small = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    assert small.num_distinct_actions() == 2 * 5 + 1 + 3
    assert small.information_state_tensor_size() == 177
    assert small.rules["n_colors"] == 3 and small.rules["hand_size"] == 5
    assert cfr.load_game("lost_cities", rules='{"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5}') == small


def test_random_playouts_keep_every_invariant(game_name):
    g = cfr.load_game(game_name)
    rng = random.Random(1)
    for seed in range(20):
        s = g.new_initial_state(seed=seed)

        def check(state, action):
            legal = state.legal_actions()
            mask = state.legal_actions_mask()
            assert mask.dtype == np.bool_ and mask.shape == (g.num_distinct_actions(),)
            assert list(np.flatnonzero(mask)) == legal
            assert state.current_player() in (0, 1)
            for p in (0, 1):
                t = state.information_state_tensor(p)
                assert t.dtype == np.float32 and t.shape == (g.information_state_tensor_size(),)
                assert np.all(np.isfinite(t))
            assert np.array_equal(state.information_state_tensor(), state.information_state_tensor(state.current_player()))
            assert state.action_to_string(action)
            assert state.observation_string() and state.information_state_string(1)

        random_playout(s, rng, check)
        assert s.is_terminal()
        assert s.current_player() == cfr.TERMINAL_PLAYER
        assert s.legal_actions() == []
        r = s.returns()
        assert r[0] == -r[1] and s.player_return(0) == r[0]
        with pytest.raises(cfr.IllegalActionError):
            s.apply_action(0)


def test_clone_is_independent_and_equal(game_name):
    g = cfr.load_game(game_name)
    s = g.new_initial_state(seed=3)
    c = s.clone()
    assert c == s
    c.apply_action(c.legal_actions()[0])
    assert c != s and len(c.history()) == len(s.history()) + 1
    assert copy.copy(s) == s and copy.deepcopy(s) == s


def test_serialize_round_trips_at_every_step(game_name):
    g = cfr.load_game(game_name)
    for seed in range(5):
        s = g.new_initial_state(seed=seed)
        rng = random.Random(seed)

        def check(state, _):
            back = g.deserialize_state(state.serialize())
            assert back == state and back.history() == state.history()
            assert np.array_equal(back.information_state_tensor(), state.information_state_tensor())
            assert pickle.loads(pickle.dumps(state)) == state

        random_playout(s, rng, check)
        assert g.deserialize_state(s.serialize()) == s


def test_lost_cities_seed_and_deck_deal_the_same_game():
    g = cfr.load_game("lost_cities")
    s = g.new_initial_state(seed=42)
    line = json.loads(s.serialize())
    assert line["actions"] == [] and len(line["deck"]) == 60
    assert g.new_initial_state(deck=line["deck"]) == s
    assert g.new_initial_state() == g.new_initial_state(seed=0)
    assert g.new_initial_state(seed=1) != s
    assert s.scores() == (0, 0)


def test_lost_cities_transcript_is_what_cfr_arena_replays():
    g = cfr.load_game("lost_cities")
    s = g.new_initial_state(seed=9)
    actions = random_playout(s, random.Random(9))
    line = json.loads(s.serialize())
    assert line["actions"] == actions == s.history()
    assert line["terminal"] is True and line["totals"] == list(s.scores())
    assert s.returns()[0] == s.scores()[0] - s.scores()[1]


def test_kuhn_has_explicit_chance_nodes_without_a_seed():
    g = cfr.load_game("kuhn")
    s = g.new_initial_state()
    assert s.is_chance_node() and s.current_player() == cfr.CHANCE_PLAYER
    outcomes = s.chance_outcomes()
    assert [a for a, _ in outcomes] == s.legal_actions() == [0, 1, 2]
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert s.action_to_string(2) == "deal K"
    s.apply_action(2)  # K to player 0
    s.apply_action(0)  # J to player 1
    assert not s.is_chance_node() and s.current_player() == 0
    s.apply_action(0)  # pass
    s.apply_action(1)  # bet
    assert s.information_state_string(0) == "K|pb"
    assert s.action_to_string(1) == "bet"
    s.apply_action(1)  # call
    assert s.is_terminal() and s.returns() == [2.0, -2.0]
    assert g.deserialize_state(s.serialize()) == s
    assert s.chance_outcomes() == []


def test_a_seed_resolves_every_chance_node_leduc_public_card_included():
    g = cfr.load_game("leduc")
    rounds_two = 0
    for seed in range(30):
        s = g.new_initial_state(seed=seed)
        decisions = []
        while not s.is_terminal():
            assert not s.is_chance_node() and s.current_player() in (0, 1)
            legal = s.legal_actions()
            a = 1 if 1 in legal else legal[0]  # check/call: every game reaches the public card
            s.apply_action(a)
            decisions.append(a)
        rounds_two += "|-|" not in s.information_state_string(0)
        again = g.new_initial_state(seed=seed)
        for a in decisions:
            again.apply_action(a)
        assert again == s and again.history() == s.history()
        assert len(s.history()) == len(decisions) + 3  # two private cards and the public card
    assert rounds_two == 30


def test_resample_hidden_keeps_the_players_view(game_name):
    g = cfr.load_game(game_name)
    rng = random.Random(5)
    changed = 0
    for seed in range(10):
        s = g.new_initial_state(seed=seed)
        for _ in range(rng.randrange(0, 6)):
            if s.is_terminal():
                break
            s.apply_action(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        p = s.current_player()
        before = s.serialize()
        for k in range(4):
            r = s.resample_hidden(k)
            assert s.serialize() == before  # the original is unchanged
            assert np.array_equal(r.information_state_tensor(p), s.information_state_tensor(p))
            assert r.observation_string(p) == s.observation_string(p)
            assert r.legal_actions() == s.legal_actions()
            changed += r != s
            back = g.deserialize_state(r.serialize())
            assert back == r
            if not r.is_terminal():  # play on: the copy and its deserialization stay equal
                a = r.legal_actions()[0]
                r.apply_action(a)
                back.apply_action(a)
                assert back == r and g.deserialize_state(r.serialize()) == r
    assert changed > 0


def test_lost_cities_observation_shows_only_the_players_hand():
    g = cfr.load_game("lost_cities")
    s = g.new_initial_state(seed=3)
    text = s.observation_string(0)
    assert "hand:" in text and "opponent hand: 8 cards" in text and "deck 44" in text
    assert s.action_to_string(16) == "draw deck" and s.action_to_string(17) == "take c0 (empty pile)"
    assert s.action_to_string(0).startswith("play ") and s.action_to_string(1).startswith("discard ")
    assert "player 0" in str(s)


def test_history_records_seeded_chance_outcomes():
    g = cfr.load_game("kuhn")
    s = g.new_initial_state(seed=4)
    assert len(s.history()) == 2 and sorted(s.history()) != [s.history()[0]] * 2
    assert s.game() == g
    assert repr(s).startswith("<cfr.State kuhn")


def test_every_query_at_every_kuhn_node_and_on_leduc_paths_answers_or_raises_a_value_error():
    def visit(state, depth=0):
        for p in (0, 1):
            assert state.information_state_tensor(p).shape[0] > 0
            for query in (state.observation_string, state.information_state_string):
                try:
                    assert query(p)
                except ValueError as e:
                    assert state.is_chance_node() and "no card yet" in str(e)
            state.player_return(p)
        str(state), repr(state), state.serialize(), state.history(), state.returns(), state.chance_outcomes()
        for a in range(state.num_distinct_actions()):
            state.action_to_string(a)
        if state.current_player() in (0, 1):
            state.information_state_tensor(), state.observation_string()
        else:
            with pytest.raises(ValueError):
                state.information_state_tensor()
        if depth < 7:
            for a in state.legal_actions():
                child = state.clone()
                child.apply_action(a)
                visit(child, depth + 1)

    visit(cfr.load_game("kuhn").new_initial_state())
    leduc = cfr.load_game("leduc").new_initial_state()
    visit(leduc, depth=3)
