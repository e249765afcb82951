"""cfr.traverse: Deep CFR traversals run by the engine with a Python callable answering the network
queries (docs/python.md "Traversals with a Python evaluator"). A callable returning what a built-in
stand-in returns gives exactly its samples, whatever the scheduler and batch size; bad answers and
the callable's exceptions are Python exceptions; the GIL is released while C++ traverses."""
import time

import numpy as np
import pytest

import cfr
from test_gil import check_released

SCHEDULERS = [
    ("interleaved", {"window": 64, "max_batch": 128}),
    ("recursive", {}),
    ("interleaved", {"window": 7, "max_batch": 3}),
    ("waves", {"window": 16, "max_batch": 5}),
    ("pooled", {"threads": 2, "window": 32, "max_batch": 8}),
]


def python_hash(inputs, legal_mask, net):
    return cfr.evaluate_builtin("hash", inputs, legal_mask, net)


def python_zeros(inputs, legal_mask, net):
    return np.zeros(legal_mask.shape, np.float32)


def assert_same_samples(a, b):
    for kind in ("advantage", "strategy"):
        x, y = getattr(a, kind), getattr(b, kind)
        for field in x._fields:
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=f"{kind}.{field}")
    for key in ("digest_advantage", "digest_strategy", "nodes", "traversals", "cutoffs"):
        assert a.stats[key] == b.stats[key], key


def check_sample_values(r, game, traverser, iteration, traversals):
    """What Deep CFR's samples are, whatever the evaluator."""
    W, A = game.information_state_tensor_size(), game.num_distinct_actions()
    assert r.stats["traversals"] == traversals
    assert r.stats["nodes"] > 0
    assert r.stats["requests"] >= r.advantage.inputs.shape[0]  # every traverser decision asks a network
    adv, strat = r.advantage, r.strategy
    assert adv.inputs.shape[1:] == (W,) and adv.targets.shape[1:] == (A,) and adv.legal_mask.shape[1:] == (A,)
    assert adv.inputs.dtype == np.float32 and adv.legal_mask.dtype == np.bool_
    assert adv.inputs.shape[0] > 0 and strat.inputs.shape[0] > 0
    assert (adv.players == traverser).all() and (adv.iterations == iteration).all()
    assert (adv.weights == iteration).all()  # training_weighting.mode = lcfr (the default)
    assert adv.legal_mask.any(axis=1).all()
    assert (adv.targets[~adv.legal_mask] == 0).all()  # regrets only on legal actions
    # σ samples: distributions over the legal actions
    np.testing.assert_allclose(strat.targets.sum(axis=1), 1.0, atol=1e-5)
    assert (strat.targets[~strat.legal_mask] == 0).all()


@pytest.mark.parametrize("game_name", ["kuhn", "leduc", "lost_cities"])
def test_a_python_evaluator_gives_the_builtin_ones_samples(game_name):
    game = cfr.load_game(game_name)
    n = 30 if game_name == "lost_cities" else 200
    for builtin, fn in (("uniform", python_zeros), ("hash", python_hash)):
        ref = cfr.traverse(game, builtin, traversals=n, seed=5, iteration=3, traverser=1)
        got = cfr.traverse(game, fn, traversals=n, seed=5, iteration=3, traverser=1)
        assert_same_samples(ref, got)
        check_sample_values(got, game, traverser=1, iteration=3, traversals=n)
        nets = got.stats["networks"]
        assert nets["advantage1"]["python"] and nets["advantage1"]["calls"] > 0
        assert nets["advantage0"]["calls"] == 0  # the traverser's own network and the strategy network only
        assert sum(v["rows"] for v in nets.values()) == got.stats["requests"]


@pytest.mark.parametrize("game_name", ["leduc", "lost_cities"])
def test_samples_do_not_depend_on_the_scheduler_or_batch_size(game_name):
    n = 24 if game_name == "lost_cities" else 150
    ref = cfr.traverse(game_name, "hash", traversals=n, seed=11)
    batches = set()
    for scheduler, options in SCHEDULERS:
        got = cfr.traverse(game_name, python_hash, traversals=n, seed=11, scheduler=scheduler, scheduler_options=options)
        assert_same_samples(ref, got)
        assert got.stats["scheduler"] == scheduler
        batches.add(round(got.stats["mean_batch"], 3))
    assert len(batches) >= 3, batches  # the batches really differed
    other = cfr.traverse(game_name, python_hash, traversals=n, seed=12)
    assert other.stats["digest_advantage"] != ref.stats["digest_advantage"]


def test_a_phase_split_by_first_index_is_the_whole_phase():
    whole = cfr.traverse("leduc", python_hash, traversals=40, seed=2)
    a = cfr.traverse("leduc", python_hash, traversals=15, seed=2)
    b = cfr.traverse("leduc", python_hash, traversals=25, seed=2, first_index=15)
    for kind in ("advantage", "strategy"):
        for field in whole.advantage._fields:
            joined = np.concatenate([getattr(getattr(a, kind), field), getattr(getattr(b, kind), field)])
            np.testing.assert_array_equal(getattr(getattr(whole, kind), field), joined)


def test_the_config_sets_the_traversals():
    # cfr-run's configs/leduc.toml: external sampling, 1000 traversals per player, seed 1
    from conftest import REPO

    r = cfr.traverse(None, "uniform", config=REPO / "configs" / "leduc.toml", set=["traversal.traversals_per_player=50"])
    assert r.stats["game"] == "leduc" and r.stats["seed"] == 1 and r.stats["traversals"] == 50
    outcome = cfr.traverse("leduc", "uniform", traversals=50, seed=1)
    # external sampling expands every traverser action: more nodes and regrets on every legal action
    assert r.stats["nodes"] > outcome.stats["nodes"]
    assert (r.advantage.targets[r.advantage.legal_mask] != 0).mean() > (
        outcome.advantage.targets[outcome.advantage.legal_mask] != 0
    ).mean()
    d = cfr.traverse("leduc", "uniform", traversals=50, seed=1, config={"traversal": {"algorithm": "external_sampling"}})
    assert d.stats["nodes"] == r.stats["nodes"]
    # training_weighting.mode = uniform: every weight 1
    u = cfr.traverse("kuhn", "uniform", traversals=20, iteration=4, set=["training_weighting.mode=uniform"])
    assert (u.advantage.weights == 1).all() and (u.advantage.iterations == 4).all()


def test_lost_cities_rules_come_from_the_game():
    small = cfr.load_game("lost_cities", rules={"n_colors": 3, "n_ranks": 6, "n_handshakes": 2, "hand_size": 5})
    r = cfr.traverse(small, python_hash, traversals=10, seed=0)
    assert r.advantage.inputs.shape[1] == small.information_state_tensor_size()
    assert r.advantage.targets.shape[1] == small.num_distinct_actions() != 22
    assert_same_samples(r, cfr.traverse(small, "hash", traversals=10, seed=0))


def test_a_torch_module_as_the_evaluator():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    game = cfr.load_game("leduc")
    W, A = game.information_state_tensor_size(), game.num_distinct_actions()
    nets = [torch.nn.Sequential(torch.nn.Linear(W, 32), torch.nn.ReLU(), torch.nn.Linear(32, A)) for _ in range(3)]

    @torch.no_grad()
    def evaluator(inputs, legal_mask, net):
        return nets[net](torch.from_numpy(inputs))  # a float32 tensor: np.asarray takes it

    r = cfr.traverse(game, evaluator, traversals=100, seed=3)
    check_sample_values(r, game, traverser=0, iteration=1, traversals=100)
    # batched and one row at a time (a BLAS rounds by batch size, so the trees may differ slightly)
    one = cfr.traverse(game, evaluator, traversals=100, seed=3, scheduler="recursive")
    assert one.stats["mean_batch"] == 1 and r.stats["mean_batch"] > 1
    assert r.advantage.inputs.shape == one.advantage.inputs.shape
    # a tensor that requires grad: NumPy's reason is in the message
    with pytest.raises(cfr.InputError, match=r"returned a Tensor, not an array \(numpy.asarray: .*requires grad"):
        cfr.traverse(game, lambda inputs, legal_mask, net: nets[net](torch.from_numpy(inputs)), traversals=5)


class Boom(Exception):
    pass


class Unconvertible:
    def __array__(self, dtype=None):
        raise ValueError("no array here")


@pytest.mark.parametrize("scheduler", ["interleaved", "pooled"])
def test_an_exception_in_the_evaluator_is_raised_by_traverse(scheduler):
    calls = []

    def evaluator(inputs, legal_mask, net):
        calls.append(len(inputs))
        if len(calls) == 3:
            raise Boom("the network failed")
        return np.zeros(legal_mask.shape, np.float32)

    with pytest.raises(Boom, match="the network failed"):
        cfr.traverse("lost_cities", evaluator, traversals=50, scheduler=scheduler)
    assert len(calls) == 3
    # the module still works afterwards
    assert cfr.traverse("kuhn", "uniform", traversals=5).stats["traversals"] == 5


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda x, m, net: np.zeros((x.shape[0], 2), np.float32), r"returned float32 of shape \(\d+, 2\); expected float32 of shape \(\d+, 3\)"),
        (lambda x, m, net: np.zeros(m.shape), r"network 0 \(advantage0\) returned float64 of shape"),
        (lambda x, m, net: np.zeros(m.shape[0], np.float32), r"returned float32 of shape \(\d+,\); expected"),
        (lambda x, m, net: None, r"returned object of shape \(\)"),
        (lambda x, m, net: Unconvertible(), r"returned a Unconvertible, not an array \(numpy.asarray: no array here\)"),
        (lambda x, m, net: "zeros", r"returned <U5 of shape \(\)|returned \S+ of shape \(\)"),
    ],
)
def test_a_wrong_answer_is_a_clear_error(answer, message):
    with pytest.raises(cfr.InputError, match=message):
        cfr.traverse("leduc", answer, traversals=10)


def test_nonfinite_outputs_follow_the_engines_policy():
    def nan_first(inputs, legal_mask, net):
        out = cfr.evaluate_builtin("hash", inputs, legal_mask, net)
        out[:, 0] = np.nan
        return out

    r = cfr.traverse("leduc", nan_first, traversals=20, seed=1)
    counted = sum(v["nonfinite_outputs"] for v in r.stats["networks"].values())
    assert counted == r.stats["requests"]  # one per row, each replaced by 0

    def zero_first(inputs, legal_mask, net):
        out = cfr.evaluate_builtin("hash", inputs, legal_mask, net)
        out[:, 0] = 0
        return out

    assert_same_samples(r, cfr.traverse("leduc", zero_first, traversals=20, seed=1))
    with pytest.raises(cfr.InputError, match=r"non-finite value\(s\).*nonfinite_policy = stop"):
        cfr.traverse("leduc", nan_first, traversals=20, set=["optimization.nonfinite_policy=stop"])


def test_bad_arguments_are_input_errors():
    with pytest.raises(cfr.InputError, match="unknown game 'chess'"):
        cfr.traverse("chess", "uniform", traversals=5)
    with pytest.raises(cfr.InputError, match="built-in stand-in: uniform, hash"):
        cfr.traverse("kuhn", "random", traversals=5)
    with pytest.raises(cfr.InputError, match="2 evaluators given; the traversals query 3 networks"):
        cfr.traverse("kuhn", [python_zeros, "uniform"], traversals=5)
    with pytest.raises(cfr.InputError, match="traverser = 2 must be 0 or 1"):
        cfr.traverse("kuhn", "uniform", traversals=5, traverser=2)
    with pytest.raises(cfr.InputError, match="traversals = 0 must be at least 1"):
        cfr.traverse("kuhn", "uniform", traversals=0)
    with pytest.raises(cfr.InputError, match=r"first_index \+ traversals = 2147483649 is beyond 2\^31 - 1"):
        cfr.traverse("kuhn", "uniform", traversals=2, first_index=2**31 - 1)
    with pytest.raises(cfr.InputError, match="scheduler"):
        cfr.traverse("kuhn", "uniform", traversals=5, scheduler="nope")
    with pytest.raises(cfr.InputError, match="window"):
        cfr.traverse("kuhn", "uniform", traversals=5, scheduler_options={"window": 0})
    with pytest.raises(cfr.InputError, match="traversal.nope"):
        cfr.traverse("kuhn", "uniform", traversals=5, set=["traversal.nope=1"])
    with pytest.raises(cfr.InputError, match="algorithm.name is 'mmd'"):
        cfr.traverse("kuhn", "uniform", traversals=5, set=["algorithm.name=mmd"])
    with pytest.raises(cfr.InputError, match="evaluator must be a callable"):
        cfr.traverse("kuhn", 3, traversals=5)
    # a sequence: one per network, built-in and Python mixed
    mixed = cfr.traverse("kuhn", [python_zeros, python_zeros, "uniform"], traversals=20)
    assert_same_samples(mixed, cfr.traverse("kuhn", "uniform", traversals=20))


def test_traverse_releases_the_gil():
    t = time.perf_counter()
    cfr.traverse("lost_cities", "hash", traversals=400, seed=0)
    alone = time.perf_counter() - t
    assert alone > 0.01, f"400 traversals took only {alone:.4f} s: too short to tell"
    check_released(lambda: cfr.traverse("lost_cities", "hash", traversals=400, seed=0), alone)


def test_a_second_thread_runs_while_a_python_evaluator_is_used():
    # The GIL is taken only for each call of the evaluator: between calls the other thread runs.
    def work():
        r = cfr.traverse("lost_cities", python_hash, traversals=200, seed=0)
        assert r.stats["traversals"] == 200

    t = time.perf_counter()
    work()
    alone = time.perf_counter() - t
    assert alone > 0.01, f"200 traversals took only {alone:.4f} s: too short to tell"
    check_released(work, alone)


def test_ctrl_c_stops_traverse_with_a_python_evaluator():
    # KeyboardInterrupt reaches the main thread inside the callable (interleaved calls it there)
    import _thread
    import threading

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    t = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        cfr.traverse("lost_cities", python_zeros, traversals=10**6)
    timer.join()
    assert time.perf_counter() - t < 30
