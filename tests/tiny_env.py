"""A user's own env, as a test ships it: a corridor of 5 cells, start in the middle, action 1 steps right,
0 steps left; reaching the right end pays 1 and ends the episode, the left end ends it with 0.
Importing this module registers it as "Corridor-v0" (Gymnasium's `tests.tiny_env:Corridor-v0` form)."""

from __future__ import annotations

import gymnasium
import numpy as np
import torch
from torch import nn

CELLS = 5


class Corridor(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(0.0, 1.0, (CELLS,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, cells: int = CELLS):
        self.cells = cells
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (cells,), np.float32)
        self.position = cells // 2

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.cells, np.float32)
        obs[self.position] = 1.0
        return obs

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.position = self.cells // 2
        return self._obs(), {}

    def step(self, action: int):
        self.position += 1 if int(action) == 1 else -1
        right, left = self.position == self.cells - 1, self.position == 0
        return self._obs(), float(right), right or left, False, {}


def make_corridor(cells: int = CELLS) -> Corridor:
    """An env factory (a module-level function: it pickles by reference, for Ray's workers)."""
    return gymnasium.wrappers.TimeLimit(Corridor(cells), max_episode_steps=20)


def small_q_network(observation_space: gymnasium.Space, action_space: gymnasium.Space) -> nn.Module:
    """A user's Q-network: one hidden layer of 16 units."""
    return nn.Sequential(nn.Linear(observation_space.shape[0], 16), nn.ReLU(), nn.Linear(16, action_space.n))


class SmallPolicyValue(nn.Module):
    """A user's policy/value network: (logits, values) from one hidden layer."""

    def __init__(self, inputs: int, actions: int):
        super().__init__()
        self.torso = nn.Sequential(nn.Linear(inputs, 16), nn.ReLU())
        self.logits, self.value = nn.Linear(16, actions), nn.Linear(16, 1)

    def forward(self, obs):
        x = self.torso(obs)
        return self.logits(x), self.value(x)


def small_policy_value_network(observation_space: gymnasium.Space, action_space: gymnasium.Space) -> nn.Module:
    return SmallPolicyValue(observation_space.shape[0], int(action_space.n))


class SmallCritic(nn.Module):
    def __init__(self, inputs: int, actions: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inputs + actions, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return self.body(torch.cat([obs, action], dim=1))


def small_actor_critic(observation_space: gymnasium.Space, action_space: gymnasium.Space):
    """A user's DPG actor and critic: the actor's tanh output is scaled to the action bounds."""
    inputs, actions = observation_space.shape[0], action_space.shape[0]
    scale = float(action_space.high[0])
    actor = nn.Sequential(nn.Linear(inputs, 16), nn.ReLU(), nn.Linear(16, actions), nn.Tanh(), Scale(scale))
    return actor, SmallCritic(inputs, actions)


class Scale(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


if "Corridor-v0" not in gymnasium.registry:
    gymnasium.register("Corridor-v0", entry_point=make_corridor)
