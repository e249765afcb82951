"""Bad input raises Python exceptions carrying the engine's messages (InputError and
IllegalActionError are ValueErrors), never a crash, and leaves states and environments unchanged."""
import json

import numpy as np
import pytest

import cfr


def test_the_exceptions_are_value_errors():
    assert issubclass(cfr.InputError, ValueError)
    assert issubclass(cfr.IllegalActionError, ValueError)


def test_unknown_game_lists_the_registered_ones():
    with pytest.raises(cfr.InputError, match=r"unknown game 'go'; valid games: lost_cities, kuhn, leduc"):
        cfr.load_game("go")


@pytest.mark.parametrize("rules,message", [
    ({"n_colors": 99}, r"n_colors = 99: must be in \[1, 8\]"),
    ({"colours": 3}, r"unknown rules knob 'colours'; valid knobs: n_colors"),
    ({"n_colors": "three"}, r"rules.n_colors must be an integer"),
    ({"hand_size": 0}, r"hand_size"),
    ("{not json", r"rules"),
])
def test_bad_rules_are_value_errors_with_the_engines_message(rules, message):
    with pytest.raises(ValueError, match=message):
        cfr.load_game("lost_cities", rules=rules)


def test_rules_for_a_game_without_rules():
    with pytest.raises(cfr.InputError, match="game 'kuhn' has no rules"):
        cfr.load_game("kuhn", rules={"n_colors": 3})
    with pytest.raises(cfr.InputError, match="dict of rule knobs"):
        cfr.load_game("lost_cities", rules=[1, 2])


def test_illegal_action_names_it_and_changes_nothing(game_name):
    s = cfr.load_game(game_name).new_initial_state(seed=1)
    before = s.serialize()
    illegal = [a for a in range(-2, 70) if a not in s.legal_actions()]
    for a in illegal:
        with pytest.raises(cfr.IllegalActionError, match=f"illegal action {a}"):
            s.apply_action(a)
    assert s.serialize() == before
    with pytest.raises(TypeError):
        s.apply_action("draw")


def test_bad_decks_and_seeds():
    g = cfr.load_game("lost_cities")
    deck = json.loads(g.new_initial_state(seed=0).serialize())["deck"]
    with pytest.raises(cfr.InputError, match="deck has 59 cards; the rules need 60"):
        g.new_initial_state(deck=deck[:-1])
    bad = list(deck)
    bad[bad.index(1)] = 2
    with pytest.raises(cfr.InputError, match=r"card id 2 appears more than 1 time"):
        g.new_initial_state(deck=bad)
    with pytest.raises(cfr.InputError, match=r"deck\[0\]"):
        g.new_initial_state(deck=[999] + deck[1:])
    with pytest.raises(cfr.InputError, match="a seed or a deck, not both"):
        g.new_initial_state(seed=1, deck=deck)
    with pytest.raises(cfr.InputError, match="has no deck"):
        cfr.load_game("kuhn").new_initial_state(deck=[0, 1, 2])
    with pytest.raises(TypeError):
        g.new_initial_state(seed=-1)


def test_bad_players():
    s = cfr.load_game("kuhn").new_initial_state()
    with pytest.raises(cfr.InputError, match="chance node"):
        s.information_state_tensor()
    with pytest.raises(cfr.InputError, match="player must be 0 or 1, got 2"):
        s.information_state_tensor(2)
    with pytest.raises(cfr.InputError, match="player must be 0 or 1"):
        s.player_return(-1)
    with pytest.raises(cfr.InputError, match="Lost Cities"):
        s.scores()


@pytest.mark.parametrize("text,message", [
    ("not json", "invalid JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"game": "kuhn", "history": [2, 2]}', r"history\[1\]: kuhn: illegal chance outcome 2"),
    ('{"game": "leduc", "history": []}', "field 'game' must be \"kuhn\""),
    ('{"game": "kuhn", "history": [0], "colour": 1}', "unknown field 'colour'"),
    ('{"game": "kuhn", "history": [], "resamples": [[5, 0, 1]]}', "beyond the history"),
])
def test_bad_serialized_kuhn_states(text, message):
    with pytest.raises(cfr.InputError, match=message):
        cfr.load_game("kuhn").deserialize_state(text)


# A million levels of nesting (2 MB): refused at the parse (at most 64 levels), not printed into a
# message (nlohmann's dump() recurses once per level: the stack overflowed, killing Python).
DEEP = "[" * 1_000_000 + "]" * 1_000_000


@pytest.mark.parametrize("game,text", [
    ("kuhn", DEEP),
    ("kuhn", '{"game": "kuhn", "history": [' + DEEP + "]}"),
    ("kuhn", '{"game": "kuhn", "history": [], "resamples": [' + DEEP + "]}"),
    ("lost_cities", '{"deck": ' + DEEP + ', "actions": []}'),
])
def test_deeply_nested_serialized_states_are_refused(game, text):
    with pytest.raises(cfr.InputError, match="nested deeper than 64 levels"):
        cfr.load_game(game).deserialize_state(text)


def test_64_levels_are_read_and_65_refused():
    kuhn = cfr.load_game("kuhn")
    with pytest.raises(cfr.InputError, match=r"history\[0\] must be an integer, got an array of 1 value$"):
        kuhn.deserialize_state('{"game": "kuhn", "history": ' + "[" * 63 + "]" * 63 + "}")  # the object and 63 arrays
    with pytest.raises(cfr.InputError, match="nested deeper than 64 levels"):
        kuhn.deserialize_state('{"game": "kuhn", "history": ' + "[" * 64 + "]" * 64 + "}")
    # A long string is named cut to 40 characters, not printed whole.
    with pytest.raises(cfr.InputError, match=r'history\[0\] must be an integer, got "x{39}…$'):
        kuhn.deserialize_state('{"game": "kuhn", "history": ["' + "x" * 100_000 + '"]}')


def test_deeply_nested_rules_are_refused():
    with pytest.raises(cfr.InputError, match=r"^rules: JSON nested deeper than 64 levels"):
        cfr.load_game("lost_cities", rules='{"n_colors": ' + DEEP + "}")
    with pytest.raises(cfr.InputError, match=r"rules.n_colors must be an integer, got an array of 1 value$"):
        cfr.load_game("lost_cities", rules='{"n_colors": [[[[3]]]]}')


@pytest.mark.parametrize("text,message", [
    ('{"game": "kuhn", "history": [4294967296]}', r"history\[0\] = 4294967296 is out of range"),
    ('{"game": "kuhn", "history": [-4294967295]}', r"history\[0\] = -4294967295 is out of range"),
    ('{"game": "kuhn", "history": [[1]]}', r"history\[0\] must be an integer, got an array of 1 value"),
    ('{"game": "kuhn", "history": [], "resamples": [[4294967296, 0, 1]]}', r"resamples\[0\]\[0\] \(step\) = 4294967296"),
    ('{"game": "kuhn", "history": [], "resamples": [[0, 4294967296, 1]]}', r"resamples\[0\]\[1\] \(player\) = 4294967296"),
])
def test_serialized_integers_past_32_bits_are_refused_not_wrapped(text, message):
    # 2^32 + k was read as k (its low bits): history [4294967296] replayed as [0], a legal deal.
    with pytest.raises(cfr.InputError, match=message):
        cfr.load_game("kuhn").deserialize_state(text)


def test_bad_serialized_lost_cities_states():
    g = cfr.load_game("lost_cities")
    line = json.loads(g.new_initial_state(seed=0).serialize())
    small = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    with pytest.raises(cfr.InputError, match="are not this game's"):
        small.deserialize_state(json.dumps(line))
    line["actions"] = [16]  # draw in the CARD phase
    del line["totals"], line["terminal"]
    with pytest.raises(cfr.InputError, match="illegal action 16"):
        g.deserialize_state(json.dumps(line))
    line["actions"] = []
    line["totals"] = [5, 0]
    with pytest.raises(cfr.InputError, match="totals"):
        g.deserialize_state(json.dumps(line))


def test_bad_vector_env_options():
    with pytest.raises(cfr.InputError, match="n must be at least 1"):
        cfr.VectorEnv("lost_cities", 0)
    with pytest.raises(cfr.InputError, match="unknown game"):
        cfr.VectorEnv("chess", 4)
    with pytest.raises(cfr.InputError, match="heuristic_balanced"):
        cfr.VectorEnv("lost_cities", 4, opponent="grandmaster")
    with pytest.raises(cfr.InputError, match="game 'kuhn' has no bot 'heuristic_balanced'"):
        cfr.VectorEnv("kuhn", 4, opponent="heuristic_balanced")
    with pytest.raises(cfr.InputError, match="agent_seat"):
        cfr.VectorEnv("kuhn", 4, opponent="random", agent_seat=2)
    with pytest.raises(cfr.InputError, match="threads"):
        cfr.VectorEnv("kuhn", 4, threads=0)
    with pytest.raises(cfr.InputError, match="max_steps"):
        cfr.VectorEnv("kuhn", 4, max_steps=0)


def test_bad_steps_apply_nothing():
    env = cfr.VectorEnv("lost_cities", 4, seed=2)
    with pytest.raises(cfr.InputError, match="call reset"):
        env.step(np.zeros(4, dtype=np.int64))
    ts = env.reset()
    twin = cfr.VectorEnv("lost_cities", 4, seed=2)
    twin.reset()
    with pytest.raises(cfr.InputError, match=r"shape \(4,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(cfr.InputError, match=r"shape \(4,\)"):
        env.step(np.zeros((4, 1), dtype=np.int64))
    actions = ts.legal_mask.argmax(axis=1)
    bad = actions.copy()
    bad[3] = 16  # draw in the CARD phase
    with pytest.raises(cfr.IllegalActionError, match="action 16 is not legal in game 3; legal actions: 0, 1"):
        env.step(bad)
    bad[3] = -5
    with pytest.raises(cfr.IllegalActionError, match="action -5 is not legal in game 3"):
        env.step(bad)
    # Not integers: refused (1.9 was cast to action 1), whatever their values.
    with pytest.raises(cfr.InputError, match=r"VectorEnv.step: actions must be integers, got float64"):
        env.step(np.full(4, 1.9))
    with pytest.raises(cfr.InputError, match=r"actions must be integers, got float64"):
        env.step(actions.astype(np.float64))
    a, b = env.step(actions), twin.step(actions)  # the failed steps changed nothing
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def test_bots_refuse_other_games_and_finished_states():
    with pytest.raises(cfr.InputError, match="valid"):
        cfr.make_bot("grandmaster")
    with pytest.raises(cfr.InputError, match="bots play Lost Cities, not kuhn"):
        cfr.make_bot("random", cfr.load_game("kuhn"))
    bot = cfr.make_bot("heuristic_balanced")
    with pytest.raises(cfr.InputError, match="bots play Lost Cities"):
        bot.choose_action(cfr.load_game("kuhn").new_initial_state(seed=0))
    small = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    with pytest.raises(cfr.InputError, match="rules"):
        bot.choose_action(small.new_initial_state(seed=0))
    with pytest.raises(cfr.InputError, match="games must be at least 1"):
        cfr.match("random", "random", games=0)
    with pytest.raises(cfr.InputError, match="valid"):
        cfr.match("random", "grandmaster", games=2)
