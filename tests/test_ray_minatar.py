"""Ape-X runs MinAtar on the ray runtime too (every architecture's inline MinAtar runs are in
test_minatar.py). Ape-X is the one whose image transitions cross processes here, through its actors'
sinks into the replay; Gorila's do with replay.mode=global, which test_ray_gorila.py runs on MinAtar.
A3C's and BA3C's workers keep their frames and exchange parameters and gradients, which their own Ray
tests cover on CartPole: a MinAtar run of each on Ray cost about 35 s of the quick tier and tested
nothing those two do not."""

import pytest

pytest.importorskip("minatar")
pytest.importorskip("ray")

from distrl import config as C  # noqa: E402
from distrl.training import train  # noqa: E402

pytestmark = pytest.mark.usefixtures("local_ray")

def test_apex_trains_minatar_on_ray(tmp_path):
    summary = train(C.build_config("apex", "MinAtar/Breakout-v1", overrides={
        "runtime": "ray", "max_frames": 2000, "eval_episodes": 2, "log_every_s": 0.5, "checkpoint_every": 50,
        "seed": 1, "run_dir": str(tmp_path / "run"), "replay.min_size": 300, "learner.batch_size": 32,
        "eval_every": 20}), live=False)
    assert summary["runtime"] == "ray" and summary["frames"] >= 2000 and summary["updates"] > 0
    assert summary["train_episodes"] > 0 and summary["eval_episodes"] == 2
    assert list((tmp_path / "run" / "checkpoints").iterdir())
