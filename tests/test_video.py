"""Videos of the agent: `distrl eval --video DIR` and `--set video_every=N` write mp4 files that decode, one
frame per agent step (Gymnasium's RecordVideo, moviepy from the `video` extra)."""

import json
import tempfile
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

import distrl
from distrl.cli import main
from distrl.components.evaluator import Evaluator
from distrl.components.workers import EvaluatorWorker
from distrl.envs import evaluate, make_env
from distrl.envs.video import Video

imageio = pytest.importorskip("imageio")
pytest.importorskip("moviepy")


def frames(path) -> np.ndarray:
    with imageio.get_reader(str(path)) as reader:
        return np.stack([frame for frame in reader])  # list() would ask len(), which is inf for mp4


def test_atari_episode_is_recorded_one_frame_per_agent_step(tmp_path):
    # 400 emulator frames = 100 agent steps: Pong lasts far longer under one action, so TimeLimit ends it.
    returns = evaluate("ALE/Pong-v5", lambda obs: np.zeros(len(obs), np.int64), episodes=1, seed=3,
                       max_episode_frames=400, video=Video(tmp_path, "pong"))
    assert len(returns) == 1
    video = frames(tmp_path / "pong-episode-0.mp4")
    # RecordVideo keeps the reset frame and one per step (101); moviepy's writer may drop the last one.
    assert len(video) in (100, 101)
    assert video.shape[1:] == (210, 160, 3)  # the full colour screen, not the 84x84 observation
    assert np.abs(video[-1].astype(int) - video[0].astype(int)).sum() > 0  # the game moved


class Flat(nn.Module):
    """A linear Q-function of MinAtar's cells: the schedule, not the play, is under test."""

    def __init__(self, cells: int, actions: int):
        super().__init__()
        self.q = nn.Linear(cells, actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.q(x.float().flatten(1))


def test_video_every_records_evaluations_0_n_2n(tmp_path):
    pytest.importorskip("minatar")
    env = make_env("MinAtar/Breakout-v1", "eval")
    net = Flat(int(np.prod(env.observation_space.shape)), int(env.action_space.n))
    evaluator = Evaluator("MinAtar/Breakout-v1", net, episodes=2, epsilon=0.0, video_dir=tmp_path, video_every=2)
    params = net.state_dict()
    for updates in (10, 20, 30, 40, 50):
        assert evaluator.evaluate(params, updates)["episodes"] == 2
    # evaluations 0, 2 and 4 (after 10, 30 and 50 updates), their first episode only
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"eval-0000000{u}-episode-0.mp4" for u in (10, 30, 50)]
    video = frames(tmp_path / "eval-000000010-episode-0.mp4")
    assert video.shape[1:] == (160, 160, 3) and len(video) >= 2  # 10x10 cells drawn 16 pixels wide


def test_the_evaluator_role_makes_a_temporary_folder_only_for_a_filmed_evaluation(tmp_path, monkeypatch):
    pytest.importorskip("minatar")
    env = make_env("MinAtar/Breakout-v1", "eval")
    net = Flat(int(np.prod(env.observation_space.shape)), int(env.action_space.n))
    made, real = [], tempfile.TemporaryDirectory
    monkeypatch.setattr(tempfile, "TemporaryDirectory", lambda **kw: made.append(kw) or real(**kw))
    parts = SimpleNamespace(make_evaluator=lambda: Evaluator("MinAtar/Breakout-v1", net, episodes=1, epsilon=0.0,
                                                             video_dir=tmp_path / "videos", video_every=2))
    worker = EvaluatorWorker(parts)
    results = [worker.evaluate(net.state_dict(), updates) for updates in (10, 20, 30)]
    assert [result["video"]["name"] if "video" in result else None for result in results] == [
        "eval-000000010-episode-0.mp4", None, "eval-000000030-episode-0.mp4"]
    assert len(made) == 2  # evaluations 0 and 2: none for the unfilmed one between them


def test_eval_video_and_video_every_from_a_run(tmp_path, capsys, monkeypatch):
    pytest.importorskip("minatar")
    scratch = tmp_path / "tmp"  # the evaluator's temporary folders (TMPDIR reaches any process of the run)
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)
    run_dir = tmp_path / "run"
    distrl.train("apex", "MinAtar/Breakout-v1", max_frames=200, actors=1, seed=2, run_dir=run_dir,
                 overrides={"eval_episodes": 1, "replay.min_size": 100_000, "video_every": 1})
    assert [p.name for p in (run_dir / "videos").iterdir()] == ["eval-000000000-episode-0.mp4"]  # the final evaluation
    assert [p.name for p in scratch.iterdir() if p.name.startswith("distrl-video-")] == []  # none left behind

    assert main(["eval", str(run_dir), "--episodes", "2", "--video", str(tmp_path / "eval")]) == 0
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["videos"] == [str(tmp_path / "eval" / f"eval-episode-{i}.mp4") for i in range(2)]
    for path in result["videos"]:
        assert len(frames(path)) >= 2
    assert "videos" in capsys.readouterr().out


def test_video_every_needs_evaluations(tmp_path, capsys):
    assert main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "r"),
                 "--set", "eval_episodes=0", "--set", "video_every=1"]) == 2
    assert "video_every" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_an_env_that_cannot_render_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    import gymnasium
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    def no_pygame(self):
        raise gymnasium.error.DependencyNotInstalled('pygame is not installed, run `pip install "gymnasium[classic-control]"`')

    monkeypatch.setattr(CartPoleEnv, "render", no_pygame)
    assert main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "r"),
                 "--set", "video_every=1"]) == 2
    err = capsys.readouterr().err
    assert "cannot render frames" in err and "pygame" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
