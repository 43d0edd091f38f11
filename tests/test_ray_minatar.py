"""Every architecture runs MinAtar on the ray runtime too (the inline smoke runs are in test_minatar.py)."""

import pytest

pytest.importorskip("minatar")
pytest.importorskip("ray")

from distrl import config as C  # noqa: E402
from distrl.training import train  # noqa: E402

pytestmark = pytest.mark.usefixtures("local_ray")

ARCHS = [
    ("apex", {"replay.min_size": 300, "learner.batch_size": 32, "eval_every": 20}),
    ("gorila", {"replay.min_size": 300}),
    ("a3c", {}),  # its Q-learning algos share these workers and store: test_minatar.py runs them inline
    ("ba3c", {"eval_every": 20}),
]


@pytest.mark.parametrize("arch,extra", ARCHS, ids=[f"{a}-{e.get('algo', '')}" for a, e in ARCHS])
def test_every_architecture_trains_minatar_on_ray(tmp_path, arch, extra):
    summary = train(C.build_config(arch, "MinAtar/Breakout-v1", overrides={
        "runtime": "ray", "max_frames": 2000, "eval_episodes": 2, "log_every_s": 0.5, "checkpoint_every": 50,
        "seed": 1, "run_dir": str(tmp_path / "run"), **extra}), live=False)
    assert summary["runtime"] == "ray" and summary["frames"] >= 2000 and summary["updates"] > 0
    assert summary["train_episodes"] > 0 and summary["eval_episodes"] == 2
    assert list((tmp_path / "run" / "checkpoints").iterdir())
