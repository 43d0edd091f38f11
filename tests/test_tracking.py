"""`--set tracking=wandb`: metrics.csv's columns, the config and the evaluations with their videos go to
Weights & Biases, offline when no key is set (no network in tests)."""

import csv
import glob
import sys
import types

import pytest

import distrl
from distrl.cli import main
from distrl.components.tracking import ID_FILE, wandb_mode


class FakeWandb(types.ModuleType):
    """What the tracker sends, recorded: the module `import wandb` finds in these tests."""

    def __init__(self):
        super().__init__("wandb")
        self.inits, self.logged, self.metrics, self.finished = [], [], [], 0
        fake = self

        class Run:
            def define_metric(self, name, step_metric=None):
                fake.metrics.append((name, step_metric))

            def log(self, data):
                fake.logged.append(data)

            def finish(self):
                fake.finished += 1

        class Video:
            def __init__(self, path, format):
                self.path, self.format = path, format

        self.Run, self.Video = Run, Video

    def init(self, **kwargs):
        self.inits.append(kwargs)
        return self.Run()


@pytest.fixture
def fake_wandb(monkeypatch):
    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    return fake


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_rows_config_evaluations_and_videos_reach_wandb(tmp_path, fake_wandb, monkeypatch):
    pytest.importorskip("minatar")
    pytest.importorskip("moviepy")
    monkeypatch.setenv("HOME", str(tmp_path))  # no netrc: no key
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run_dir = tmp_path / "run"
    distrl.train("apex", "MinAtar/Breakout-v1", max_frames=400, actors=1, seed=2, run_dir=run_dir,
                 overrides={"eval_episodes": 1, "replay.min_size": 100_000, "video_every": 1,
                            "tracking": "wandb", "log_every_s": 1e-6})  # a row every round, on any machine
    (init,) = fake_wandb.inits
    assert init["mode"] == "offline" and init["dir"] == str(run_dir) and init["name"] == "run"
    assert init["config"]["env"] == "MinAtar/Breakout-v1" and init["config"]["replay"]["min_size"] == 100_000
    assert init["id"] == (run_dir / "wandb" / ID_FILE).read_text()
    assert ("train/*", "train/frames") in fake_wandb.metrics and ("eval/*", "eval/updates") in fake_wandb.metrics

    train_logs = [d for d in fake_wandb.logged if "train/frames" in d]
    metrics = rows(run_dir / "metrics.csv")
    assert len(train_logs) == len(metrics) >= 2  # every metrics.csv row
    last = metrics[-1]
    assert train_logs[-1]["train/frames"] == float(last["frames"]) == 400
    assert {f"train/{k}" for k, v in last.items() if v != "nan"} == set(train_logs[-1])

    (eval_log,) = [d for d in fake_wandb.logged if "eval/updates" in d]  # the final evaluation
    (evaluation,) = rows(run_dir / "evaluations.csv")
    assert eval_log["eval/return_mean"] == float(evaluation["eval_return_mean"])
    video = eval_log["eval/video"]
    assert video.format == "mp4" and video.path == str(run_dir / "videos" / "eval-000000000-episode-0.mp4")
    assert fake_wandb.finished == 1

    # a resumed run goes on in the same W&B run
    distrl.resume(run_dir, overrides={"max_frames": 600})
    assert fake_wandb.inits[1]["id"] == init["id"] and fake_wandb.inits[1]["resume"] == "allow"


def test_wandb_mode_is_offline_without_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    assert wandb_mode() == "offline"
    (tmp_path / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password 0123456789abcdef\n")
    (tmp_path / ".netrc").chmod(0o600)
    assert wandb_mode() == "online"  # `wandb login` wrote its key
    (tmp_path / ".netrc").unlink()
    monkeypatch.setenv("WANDB_API_KEY", "0123456789abcdef")
    assert wandb_mode() == "online"
    monkeypatch.setenv("WANDB_MODE", "disabled")
    assert wandb_mode() == "disabled"  # the user's word wins


def test_a_real_offline_wandb_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run_dir = tmp_path / "run"
    distrl.train("apex", "CartPole-v1", max_frames=300, actors=1, seed=1, run_dir=run_dir,
                 overrides={"eval_episodes": 1, "replay.min_size": 100_000, "tracking": "wandb"})
    run_id = (run_dir / "wandb" / ID_FILE).read_text()
    assert glob.glob(str(run_dir / "wandb" / "offline-run-*" / f"run-{run_id}.wandb"))  # `wandb sync` uploads it


def test_tracking_without_wandb_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)  # not installed
    assert main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "r"),
                 "--set", "tracking=wandb"]) == 2
    assert "pip install 'distrl[wandb]'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
    assert main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "r"),
                 "--set", "tracking=mlflow"]) == 2
    assert "tracking" in capsys.readouterr().err
