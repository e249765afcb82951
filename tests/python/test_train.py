"""cfr.train (docs/python.md "Training"): a run from a dict or a TOML path is cfr-run's run, resume
continues it, Ctrl-C and a failing callback stop it cleanly, bad configs raise InputError."""
import json
import os
import signal
import subprocess
import threading

import pytest

import cfr
from conftest import REPO, build_dir

KUHN = {
    "algorithm": {"name": "mmd"},
    "run": {"experiment_name": "py-kuhn", "game": "kuhn", "seed": 1, "max_iterations": 12},
    "network": {"hidden_size": 16, "num_layers": 1},
    "mmd": {"rollouts_per_iteration": 256, "epochs": 1, "magnet_weight": 0.5, "magnet_every": 10, "gae_lambda": 1.0},
    "traversal": {"scheduler": "interleaved"},
    "scheduler": {"interleaved": {"window": 32}},
    "evaluation": {"eval_every": 6},
}


def lines(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(x) for x in f if x.strip()]


def test_a_dict_config_is_cfr_runs_run(tmp_path):
    seen = []
    last = cfr.train(KUHN, str(tmp_path / "py"), on_metrics=seen.append)
    assert [m["iteration"] for m in seen] == list(range(1, 13))
    assert last == seen[-1] and "exploitability" in last
    assert (tmp_path / "py" / "checkpoints" / "latest").exists()
    # The same config through cfr-run: the same samples.
    config = tmp_path / "kuhn.toml"
    py_cfg = (tmp_path / "py" / "config.toml").read_text()
    config.write_text(py_cfg)
    subprocess.run([str(build_dir() / "bin" / "cfr-run"), str(config), "--run-dir", str(tmp_path / "cli")], check=True,
                   capture_output=True)
    assert [m["sample_digest"] for m in lines(tmp_path / "cli")] == [m["sample_digest"] for m in seen]


def test_a_toml_path_with_overrides_and_resume(tmp_path):
    run = str(tmp_path / "run")
    first = cfr.train(REPO / "configs" / "kuhn_mmd.toml", run, set=["run.max_iterations=3", "mmd.rollouts_per_iteration=256"])
    assert first["iteration"] == 3
    seen = []
    last = cfr.train(None, run, resume=True, set=["run.max_iterations=5"], on_metrics=seen.append)
    assert [m["iteration"] for m in seen] == [4, 5] and last["iteration"] == 5


def test_bad_configs_raise_input_error_naming_the_key(tmp_path):
    with pytest.raises(cfr.InputError, match="mmd.clip"):
        cfr.train(KUHN, str(tmp_path / "bad"), set=["mmd.clip=-1.0"])
    with pytest.raises(cfr.InputError, match="must be a table"):
        cfr.train({"run": 3}, str(tmp_path / "bad2"))
    with pytest.raises(cfr.InputError, match="config=None"):
        cfr.train(KUHN, str(tmp_path / "bad3"), resume=True)


def test_a_failing_callback_stops_the_run_and_keeps_its_checkpoint(tmp_path):
    def boom(m):
        if m["iteration"] == 2:
            raise RuntimeError("enough")

    long = dict(KUHN, run=dict(KUHN["run"], max_iterations=100000))
    with pytest.raises(RuntimeError, match="enough"):
        cfr.train(long, str(tmp_path / "r"), on_metrics=boom)
    done = lines(tmp_path / "r")
    assert 2 <= done[-1]["iteration"] < 100000
    assert (tmp_path / "r" / "checkpoints" / "latest").exists()


def test_ctrl_c_stops_the_run_cleanly(tmp_path):
    started = threading.Event()

    def first(m):
        started.set()

    def interrupt():
        started.wait(60)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    long = dict(KUHN, run=dict(KUHN["run"], max_iterations=100000))
    with pytest.raises(KeyboardInterrupt):
        cfr.train(long, str(tmp_path / "c"), on_metrics=first)
    assert (tmp_path / "c" / "checkpoints" / "latest").exists()
    log = (tmp_path / "c" / "log.txt").read_text()
    assert "completed" in log or "interrupted" in log or "stop" in log
    # It resumes from there.
    last = cfr.train(None, str(tmp_path / "c"), resume=True, set=[f"run.max_iterations={lines(tmp_path / 'c')[-1]['iteration'] + 1}"])
    assert last["iteration"] == lines(tmp_path / "c")[-1]["iteration"]
