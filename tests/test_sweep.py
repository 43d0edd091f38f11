"""`distrl sweep`: values drawn once and crossed with the seeds, one ordinary run directory per Ray Tune trial,
sweep.csv and sweep.png from them; bad input refused before any trial starts."""

import csv
import json
import math

import numpy as np
import pytest

from distrl.cli import main
from distrl.errors import ConfigError
from distrl.sweeps import draw, parse_sample, trial_name


def test_loguniform_draws_are_uniform_in_log_space():
    values = np.array(draw({"learner.lr": "loguniform(1e-4,1e-2)"}, 4000, seed=3)["learner.lr"])
    assert values.min() >= 1e-4 and values.max() <= 1e-2
    assert abs(np.mean(values < 1e-3) - 0.5) < 0.03  # 1e-3 is the middle in log space (sd of the mean 0.008)
    assert abs(np.mean(values < 1e-3 * 10 ** 0.5) - 0.75) < 0.03
    uniform = np.array(draw({"rl.gamma": "uniform(0.9,0.99)"}, 4000, seed=3)["rl.gamma"])
    assert abs(uniform.mean() - 0.945) < 0.002 and uniform.min() >= 0.9 and uniform.max() <= 0.99
    assert draw({"a": "uniform(0,1)"}, 8, seed=5) == draw({"a": "uniform(0,1)"}, 8, seed=5)  # drawn once, reproducibly


@pytest.mark.parametrize("spec", ["loguniform(0,1)", "normal(0,1)", "uniform(2,1)", "loguniform(1e-4)", "uniform(a,b)"])
def test_bad_distributions_are_refused(spec):
    with pytest.raises(ConfigError):
        parse_sample(spec)


def test_trial_names():
    assert trial_name({"learner.lr": 0.000412, "seed": 1}) == "learner.lr=0.000412-seed1"
    assert trial_name({"net.hidden": "64,64", "seed": 2}) == "net.hidden=64_64-seed2"


def test_refused_before_any_trial(tmp_path, capsys):
    pytest.importorskip("ray.tune")
    base = ["sweep", "apex", "--env", "CartPole-v1", "--out", str(tmp_path / "s")]
    for extra, words in ((["--seeds", "1"], "nothing to sweep"),
                         (["--grid", "learner.lr=1e-3,x"], "learner.lr"),
                         (["--grid", "learner.nope=1,2"], "learner.nope"),
                         (["--grid", "learner.lr=1e-3", "--set", "runtime=ray"], "inline"),
                         (["--sample", "learner.lr=gauss(1,2)"], "loguniform")):
        assert main(base + extra) == 2, extra
        assert words in capsys.readouterr().err, extra
    assert not (tmp_path / "s").exists()  # nothing written
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    assert main(base + ["--grid", "learner.lr=1e-3"]) == 2
    assert "not empty" in capsys.readouterr().err and (tmp_path / "s" / "notes.txt").read_text() == "mine"


@pytest.mark.learning(seconds=40)  # Ray Tune's start and two trials: in the learning tier, which `make test` keeps under 10 minutes
@pytest.mark.alone
def test_a_sweep_on_tune_gives_one_run_per_trial_and_the_table(tmp_path):
    pytest.importorskip("ray.tune")
    out = tmp_path / "sweep"
    assert main(["sweep", "apex", "--env", "CartPole-v1", "--out", str(out), "--sample", "learner.lr=loguniform(1e-4,1e-2)",
                 "--samples", "2", "--sample-seed", "7", "--seeds", "1", "--grid", "learner.batch_size=32",
                 "--max-frames", "800", "--set", "replay.min_size=200", "--set", "eval_episodes=2",
                 "--set", "log_every_s=0.2"]) == 0
    lrs = draw({"learner.lr": "loguniform(1e-4,1e-2)"}, 2, seed=7)["learner.lr"]
    with open(out / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(float(r["learner.lr"]) for r in rows) == sorted(lrs)
    for row in rows:
        assert row["status"] == "done" and row["seed"] == "1" and row["learner.batch_size"] == "32"
        summary = json.loads((tmp_path / "sweep" / "trials" / row["run_dir"].split("/")[-1] / "summary.json").read_text())
        assert summary["frames"] >= 800 and summary["seed"] == 1 and summary["runtime"] == "inline"
        config = json.loads((out / "trials" / row["run_dir"].split("/")[-1] / "config.json").read_text())
        assert math.isclose(config["learner"]["lr"], float(row["learner.lr"]))
        assert config["learner"]["batch_size"] == 32 and config["torch_threads"] == 1
        assert float(row["eval_return_mean"]) == summary["eval_return_mean"]
    assert json.loads((out / "sweep.json").read_text())["grid"]["learner.lr"] == lrs
    assert (out / "sweep.png").stat().st_size > 10_000
    assert not __import__("ray").is_initialized()  # the Ray the sweep started ended with it


def test_distrl_sweep_is_the_function():
    import distrl
    from distrl import api
    assert distrl.sweep is api.sweep


def test_collect_reads_finished_and_stopped_trials(tmp_path):
    from distrl.sweeps import collect
    done = {"learner.lr": 0.001, "seed": 1}
    stopped = {"learner.lr": 0.0001, "seed": 1}
    (tmp_path / trial_name(done)).mkdir()
    (tmp_path / trial_name(done) / "summary.json").write_text(json.dumps(
        {"frames": 800, "updates": 30, "final_return_mean": 21.5, "eval_return_mean": 40.0}))
    rows = collect([{"config": done, "metrics": {}, "error": None},
                    {"config": stopped, "metrics": {"frames": 100, "updates": 2, "episode_return_mean": 9.0},
                     "error": None}], ["learner.lr"], tmp_path)
    assert [(r["learner.lr"], r["status"], r["frames"], r["episode_return_mean"]) for r in rows] == [
        (0.0001, "stopped early", 100, 9.0), (0.001, "done", 800, 21.5)]
    assert rows[1]["eval_return_mean"] == 40.0 and rows[0]["eval_return_mean"] is None
    assert rows[1]["run_dir"] == str(tmp_path / "learner.lr=0.001-seed1") and list(rows[0])[-1] == "run_dir"

