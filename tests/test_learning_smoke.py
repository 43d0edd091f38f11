"""One short learning run per architecture, in `make test`: each learns tests/tiny_env.py's signpost
corridor from its small preset, inline with seed 1, in seconds. An episode pays at the end of the
corridor that a signpost bit of the observation shows, so no fixed action solves it: the greedy policy
must read the sign and walk to that end, from the start and from each cell on the way. These prove
each system's learning path end to end; the learning tier (`make test-learning`) holds the acceptance
runs on CartPole, Pendulum and MinAtar. The budgets passed with seeds 1, 2 and 3."""

import numpy as np
import pytest

import distrl
from distrl import config as C
from distrl.training import train
from tests.cases import CONTINUOUS, cases, names

BASE = {"seed": 1, "eval_episodes": 10, "log_every_s": 60.0, "checkpoint_every": 1_000_000}
# each architecture's env and overrides on its small preset (gamma 0.9 for every learner): tests/cases/


def on_the_way(env: str, goal_right: bool) -> list[np.ndarray]:
    """The observations between the start and the signposted end."""
    sign = 1.0 if goal_right else -1.0
    if env == CONTINUOUS:  # position x in [-1, 1], moved by half the action
        return [np.array([sign * x, goal_right], np.float32) for x in (0.0, 0.5)]
    cells = []
    for cell in range(4, 8) if goal_right else range(4, 0, -1):  # 9 cells, the start in the middle
        obs = np.zeros(10, np.float32)
        obs[cell], obs[9] = 1.0, float(goal_right)
        cells.append(obs)
    return cells


def steps_right(env: str, action) -> bool:
    return float(np.asarray(action).reshape(-1)[0]) > 0 if env == CONTINUOUS else int(action) == 1


@pytest.mark.parametrize("architecture", names())
def test_each_architecture_learns_the_signpost_corridor(tmp_path, architecture):
    env, overrides = cases(architecture).smoke
    cfg = C.build_config(architecture, env, overrides={**BASE, "run_dir": str(tmp_path / "run"), **overrides})
    summary = train(cfg, live=False)
    assert summary["eval_episodes"] == 10 and summary["frames"] >= cfg.max_frames
    assert summary["eval_return_mean"] == pytest.approx(1.0), summary  # the signposted end, every episode
    policy = distrl.load_policy(tmp_path / "run")
    for goal_right in (True, False):
        way = on_the_way(env, goal_right)
        assert [steps_right(env, policy.act(o)) for o in way] == [goal_right] * len(way)
