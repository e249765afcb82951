"""help() and docstrings: every public name of the module and every method of its classes is
documented, and the type stubs (cfr.pyi, beside the module) declare them."""
import ast
import pathlib
import pydoc

import cfr

CLASSES = [cfr.Game, cfr.State, cfr.VectorEnv, cfr.Bot, cfr.Player]


def public(obj):
    return [n for n in dir(obj) if not n.startswith("_")]


def test_module_and_every_public_name_have_docstrings():
    assert cfr.__doc__ and "load_game" in cfr.__doc__
    missing = [n for n in public(cfr) if not isinstance(getattr(cfr, n), int) and not (getattr(cfr, n).__doc__ or "").strip()]
    assert missing == []
    for cls in CLASSES:
        assert (cls.__doc__ or "").strip(), cls
        missing = [f"{cls.__name__}.{n}" for n in public(cls) if not (getattr(cls, n).__doc__ or "").strip()]
        assert missing == []


def test_help_renders():
    text = pydoc.render_doc(cfr, renderer=pydoc.plaintext)
    for name in ("load_game", "VectorEnv", "information_state_tensor", "resample_hidden", "IllegalActionError"):
        assert name in text
    assert "deck" in pydoc.render_doc(cfr.Game.new_initial_state, renderer=pydoc.plaintext)


def test_stubs_declare_every_public_name():
    stub = pathlib.Path(cfr.__file__).with_name("cfr.pyi")
    tree = ast.parse(stub.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
    assert set(public(cfr)) - top == set()
    for cls in CLASSES:
        assert set(public(cls)) - members[cls.__name__] == set(), cls.__name__
