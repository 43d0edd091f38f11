"""`distrl train r2d2`: the builder runs inline on the velocity-free CartPole, its checkpoint resumes, and its
recurrent policy plays through `evaluate` and `load_policy` (state carried, previous action and reward fed)."""

import numpy as np

import distrl
from distrl.envs import make_env
from distrl.envs.partial import CARTPOLE_NO_VELOCITY


def test_the_velocity_free_cartpole_hides_the_velocities():
    env, full = make_env(CARTPOLE_NO_VELOCITY, seed=3), make_env("CartPole-v1", seed=3)
    obs, full_obs = env.reset()[0], full.reset()[0]
    assert obs.shape == (2,) and np.allclose(obs, full_obs[[0, 2]])
    for _ in range(5):
        obs, *_ = env.step(1)
        full_obs, *_ = full.step(1)
    assert np.allclose(obs, full_obs[[0, 2]])


def test_r2d2_trains_resumes_and_plays(tmp_path):
    run_dir = tmp_path / "run"
    summary = distrl.train("r2d2", CARTPOLE_NO_VELOCITY, max_frames=1200, seed=1, run_dir=run_dir,
                           overrides={"eval_episodes": 2, "checkpoint_every": 20, "replay.checkpoint": True,
                                      "replay.min_size": 30, "replay.samples_per_insert": 16.0})
    assert summary["preset"] == "r2d2-cartpole" and summary["updates"] > 0 and summary["frames"] >= 1200
    # the sequence replay comes back with the checkpoint: learning goes on at once (an empty replay would
    # wait for its 30 sequences, 600 steps, longer than this 400-frame resume)
    resumed = distrl.resume(run_dir, overrides={"max_frames": 1600})
    assert resumed["resumed_from"] and resumed["updates"] >= summary["updates"] + 5
    result = distrl.evaluate(run_dir, episodes=2)
    assert result["episodes"] == 2 and result["updates"] == resumed["updates"]
    policy = distrl.load_policy(run_dir)
    env = make_env(CARTPOLE_NO_VELOCITY, "eval", seed=4)
    obs, _ = env.reset()
    policy.reset()
    for _ in range(3):
        action = policy.act(obs)
        obs, reward, *_ = env.step(action)
        policy.observe(action, reward)
    assert action in (0, 1)
