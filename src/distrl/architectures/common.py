"""What every DQN-family wiring does first: probe the env, pick torch threads, derive seeds."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces

from distrl.envs import is_atari, make_env
from distrl.errors import ConfigError


def probe_discrete_env(env_id: str, architecture: str) -> tuple[tuple[int, ...], int]:
    """(observation shape, number of actions); a bad id or a continuous env fails here, before any file is written."""
    probe = make_env(env_id, "eval")
    try:
        if not isinstance(probe.action_space, spaces.Discrete):
            raise ConfigError(f"{architecture} needs a discrete action space, but {env_id} has "
                              f"{type(probe.action_space).__name__}: use a discrete env such as "
                              "CartPole-v1 or ALE/Pong-v5")
        return tuple(probe.observation_space.shape), int(probe.action_space.n)
    finally:
        probe.close()


def frame_skip(env_id: str) -> int:
    """Frames are emulator frames, as in the papers: 4 per agent step on Atari."""
    return 4 if is_atari(env_id) else 1


def set_torch_threads(torch_threads: int, obs_shape: tuple[int, ...]) -> None:
    if torch_threads or len(obs_shape) == 1:
        # Small MLPs run fastest on one thread; more only add synchronisation (20x slower seen here).
        torch.set_num_threads(torch_threads or 1)


def spawn_seeds(seed: int, n: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]
