"""Evaluation episodes under the papers' protocol (no-op starts, unclipped scores, optional epsilon)."""

from __future__ import annotations

from typing import Callable

import gymnasium
import numpy as np

from distrl.envs.make import make_env
from distrl.envs.video import Video, record
from distrl.errors import ConfigError


def evaluate(
    env_id: str,
    act: Callable[[np.ndarray], np.ndarray],
    episodes: int,
    epsilon: float = 0.0,
    seed: int = 0,
    max_episode_frames: int | None = None,
    video: Video | None = None,
) -> list[float]:
    """Play ``episodes`` whole episodes and return their unclipped returns.

    ``act`` gets a batch of one observation and returns a batch of actions, so the same
    batched policy code serves actors and evaluation. With probability ``epsilon`` a
    uniformly random action replaces it (DQN-style evaluation uses e.g. 0.05 or 0.001).
    An ``act`` with a ``reset()`` method (a recurrent policy) is reset before every episode; one with
    ``observe(action, reward)`` is told each step's action (random ones too) and reward.
    Episode ``i`` is reset with a seed derived from ``seed``, so results are
    reproducible for a deterministic ``act`` while episodes still differ (no-op counts).
    ``video`` records episodes (all, or its first ``episodes``) as mp4 files in its folder.
    """
    if not isinstance(episodes, int) or episodes < 1:
        raise ConfigError(f"episodes must be an int >= 1, got {episodes!r}")
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigError(f"epsilon must be in [0, 1], got {epsilon!r}")

    env = make_env(env_id, "eval", max_episode_frames=max_episode_frames,
                   render_mode="rgb_array" if video is not None else None)
    if video is not None:
        env = record(env, env_id, video)
    seq = np.random.SeedSequence(seed)
    episode_seeds = seq.generate_state(episodes)
    rng = np.random.default_rng(seq.spawn(1)[0])
    space = env.action_space
    space.seed(int(rng.integers(2**31)))
    discrete = isinstance(space, gymnasium.spaces.Discrete)

    returns: list[float] = []
    try:
        for episode_seed in episode_seeds:
            obs, _ = env.reset(seed=int(episode_seed))
            if hasattr(act, "reset"):
                act.reset()  # a recurrent policy starts every episode from its initial state
            while True:
                if epsilon > 0.0 and rng.random() < epsilon:
                    action = space.sample()
                else:
                    action = np.asarray(act(np.asarray(obs)[None]))[0]
                    if discrete:
                        action = int(action)
                obs, reward, terminated, truncated, info = env.step(action)
                if hasattr(act, "observe"):
                    act.observe(action, reward)  # a recurrent Q policy's next input
                if terminated or truncated:
                    # RecordEpisodeStatistics sits inside any reward clipping: raw score.
                    returns.append(float(info["episode"]["r"]))
                    break
    finally:
        env.close()
    return returns
