"""Partially observable test envs distrl registers with Gymnasium (ids under distrl/): what a recurrent
agent (R2D2) is for and a feed-forward one cannot solve."""

from __future__ import annotations

from typing import cast

import gymnasium
import numpy as np
from gymnasium.wrappers import TransformObservation

CARTPOLE_NO_VELOCITY = "distrl/CartPoleNoVelocity-v1"
_POSITIONS = [0, 2]  # CartPole's cart position and pole angle; 1 and 3 are their velocities


def _positions(obs: np.ndarray) -> np.ndarray:
    return np.asarray(obs, dtype=np.float32)[_POSITIONS]


def cartpole_no_velocity(**kwargs) -> gymnasium.Env:
    """CartPole-v1 observing the cart's position and the pole's angle only: the velocities, half of what
    balancing needs, must be inferred from successive observations (the usual POMDP test of recurrent RL)."""
    env = gymnasium.make("CartPole-v1", **kwargs)
    space = cast(gymnasium.spaces.Box, env.observation_space)
    return TransformObservation(env, _positions, gymnasium.spaces.Box(space.low[_POSITIONS], space.high[_POSITIONS],
                                                                      dtype=np.float32))


def register() -> None:
    if CARTPOLE_NO_VELOCITY not in gymnasium.registry:
        gymnasium.register(CARTPOLE_NO_VELOCITY, entry_point=cartpole_no_velocity)
