"""Shared fixtures of the cfr module's tests (docs/python.md). Run by CTest (label python) with
PYTHONPATH=build/python and Debian's /usr/bin/python3; CFR_BUILD_DIR names the build folder."""
import os
import pathlib

import pytest

import cfr  # noqa: F401  (a module that does not import fails every test here, loudly)

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("CFR_BUILD_DIR", REPO / "build"))


@pytest.fixture(params=["lost_cities", "kuhn", "leduc"])
def game_name(request):
    return request.param


def random_playout(state, rng, on_step=None, max_steps=20000):
    """Plays uniformly random legal actions (chance outcomes too) until the end; returns the actions."""
    actions = []
    while not state.is_terminal() and len(actions) < max_steps:
        legal = state.legal_actions()
        a = legal[rng.randrange(len(legal))]
        if on_step is not None:
            on_step(state, a)
        state.apply_action(a)
        actions.append(a)
    return actions
