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
    together: int = 1,
    screen_size: int = 84,
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
    ``together`` > 1 plays that many episodes at once, each in an env of its own, with one ``act`` call for
    all of them a step: on a CPU one forward pass of a batch of 8 costs far less than 8 of one. Each episode
    keeps its seed; the random actions are drawn in another order, so the returns differ from one at a time
    by chance only. Recurrent policies (``reset``/``observe``) and videos play one at a time.
    ``screen_size``: Atari's frames, as the policy was trained on them (make_env's).
    """
    if not isinstance(episodes, int) or episodes < 1:
        raise ConfigError(f"episodes must be an int >= 1, got {episodes!r}")
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigError(f"epsilon must be in [0, 1], got {epsilon!r}")

    if not isinstance(together, int) or together < 1:
        raise ConfigError(f"together must be an int >= 1, got {together!r}")
    if together > 1 and video is None and not hasattr(act, "reset") and not hasattr(act, "observe"):
        return _together(env_id, act, episodes, epsilon, seed, max_episode_frames, min(together, episodes),
                         screen_size)
    env = make_env(env_id, "eval", max_episode_frames=max_episode_frames, screen_size=screen_size,
                   render_mode="rgb_array" if video is not None else None)
    if video is not None:
        env = record(env, env_id, video)
    episode_seeds, rng, space, discrete = _seeded(seed, episodes, env.action_space)

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


def _together(env_id: str, act: Callable[[np.ndarray], np.ndarray], episodes: int, epsilon: float, seed: int,
              max_episode_frames: int | None, slots: int, screen_size: int) -> list[float]:
    """evaluate() with `slots` episodes at once: each slot takes the next episode (and its seed) when its
    own ends. By hand, not a gymnasium vector env: its autoreset would start episodes the protocol never
    plays, with seeds of its own."""
    envs = [make_env(env_id, "eval", max_episode_frames=max_episode_frames, screen_size=screen_size)
            for _ in range(slots)]
    episode_seeds, rng, space, discrete = _seeded(seed, episodes, envs[0].action_space)
    returns: list[float | None] = [None] * episodes
    playing: dict[int, int] = {}  # slot -> episode
    obs: list[np.ndarray | None] = [None] * slots
    started = 0

    def start(k: int) -> None:
        """Slot k takes the next episode, reset with that episode's seed."""
        nonlocal started
        obs[k], _ = envs[k].reset(seed=int(episode_seeds[started]))
        playing[k], started = started, started + 1

    try:
        for k in range(slots):
            start(k)
        while playing:
            active = sorted(playing)
            greedy = [k for k in active if not (epsilon > 0.0 and rng.random() < epsilon)]
            actions = {k: space.sample() for k in active if k not in greedy}
            if greedy:
                chosen = np.asarray(act(np.stack([np.asarray(obs[k]) for k in greedy])))
                actions.update({k: int(a) if discrete else a for k, a in zip(greedy, chosen)})
            for k in active:
                obs[k], _, terminated, truncated, info = envs[k].step(actions[k])
                if terminated or truncated:
                    returns[playing.pop(k)] = float(info["episode"]["r"])
                    if started < episodes:
                        start(k)
    finally:
        for env in envs:
            env.close()
    return [r for r in returns if r is not None]


def _seeded(seed: int, episodes: int, space: gymnasium.Space) -> tuple[np.ndarray, np.random.Generator,
                                                                      gymnasium.Space, bool]:
    """Each episode's reset seed and the random actions' generator, both from `seed`, so that both ways of
    playing reset episode i alike; the action space seeded from that generator; whether it is discrete."""
    seq = np.random.SeedSequence(seed)
    episode_seeds = seq.generate_state(episodes)
    rng = np.random.default_rng(seq.spawn(1)[0])
    space.seed(int(rng.integers(2**31)))
    return episode_seeds, rng, space, isinstance(space, gymnasium.spaces.Discrete)
