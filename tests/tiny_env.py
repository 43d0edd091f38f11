"""A user's own env, as a test ships it: a corridor of 5 cells, start in the middle, action 1 steps right,
0 steps left; reaching the right end pays 1 and ends the episode, the left end ends it with 0.
Importing this module registers it as "Corridor-v0" (Gymnasium's `tests.tiny_env:Corridor-v0` form),
and the learning smoke's signpost tasks as "Signpost-v0" and "SteeredSignpost-v0"."""

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


class SignpostCorridor(Corridor):
    """The learning smoke's task (tests/test_learning_smoke.py): each episode pays at one end of the
    corridor, drawn at reset and shown by a last observation bit (1: the right end); the other end
    ends the episode with 0. The right move depends on the state, so no fixed action solves it."""

    def __init__(self, cells: int = 9):
        super().__init__(cells)
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (cells + 1,), np.float32)
        self.goal_right = True

    def _obs(self) -> np.ndarray:
        return np.append(super()._obs(), np.float32(self.goal_right))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.goal_right = bool(self.np_random.integers(2))
        return self._obs(), {}

    def step(self, action: int):
        obs, reward, terminated, truncated, info = super().step(action)
        if terminated:
            reward = float((self.position == self.cells - 1) == self.goal_right)
        return obs, reward, terminated, truncated, info


class SteeredSignpost(gymnasium.Env):
    """The signpost task with a continuous action (Ape-X DPG's smoke): the position x starts at 0 and
    moves by half the action in [-1, 1] until |x| reaches 1. Each step pays its progress towards the
    end the last observation bit shows (1: the right end), so the best return is 1 and the worst -1.
    Dense, because DPG climbs the critic's dQ/da: paid only at the end, as the corridor is, it found
    the signposted end in 1 of 14 runs tried (2,000-6,000 frames, seeds 1-3, three step sizes)."""
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def _obs(self) -> np.ndarray:
        return np.array([self.x, float(self.goal_right)], np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.x, self.goal_right = 0.0, bool(self.np_random.integers(2))
        return self._obs(), {}

    def step(self, action):
        before = self.x
        self.x = float(np.clip(self.x + 0.5 * np.clip(np.asarray(action, np.float64).reshape(-1)[0], -1, 1), -1, 1))
        progress = (self.x - before) * (1.0 if self.goal_right else -1.0)
        return self._obs(), progress, abs(self.x) >= 1.0, False, {}


def make_signpost_corridor() -> SignpostCorridor:
    return gymnasium.wrappers.TimeLimit(SignpostCorridor(), max_episode_steps=20)


def make_steered_signpost() -> SteeredSignpost:
    return gymnasium.wrappers.TimeLimit(SteeredSignpost(), max_episode_steps=20)


def small_q_network(observation_space: gymnasium.Space, action_space: gymnasium.Space) -> nn.Module:
    """A user's Q-network: one hidden layer of 16 units."""
    return nn.Sequential(nn.Linear(observation_space.shape[0], 16), nn.ReLU(), nn.Linear(16, action_space.n))


def dead_q_network(observation_space: gymnasium.Space, action_space: gymnasium.Space) -> nn.Module:
    """small_q_network whose hidden units never fire (biases -1,000): one output for every state, as a
    network whose ReLUs died in training."""
    net = small_q_network(observation_space, action_space)
    with torch.no_grad():
        net[0].bias.fill_(-1000.0)
    return net


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


for _id, _factory in (("Corridor-v0", make_corridor), ("Signpost-v0", make_signpost_corridor),
                     ("SteeredSignpost-v0", make_steered_signpost)):
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point=_factory)
