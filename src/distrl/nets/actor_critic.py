"""Policy-value networks for A3C (Mnih et al. 2016): Atari CNN / MLP torso, optional LSTM."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import torch
import torch.nn.functional as F
from torch import nn

from distrl.nets.q_networks import MLP

LSTMState = tuple[torch.Tensor, torch.Tensor]


class A3CCNN(nn.Module):
    """The A3C Atari torso (conv 16x8x8/4, conv 32x4x4/2, fc 256); scales uint8 frames like NatureCNN."""

    def __init__(self, in_channels: int = 4, fc_units: int = 256):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, 16, 8, stride=4), nn.ReLU(),
            nn.Conv2d(16, 32, 4, stride=2), nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * 9 * 9, fc_units), nn.ReLU(),  # 84 -> 20 -> 9
        )
        self.out_features = fc_units

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float() / 255.0)


class PolicyValueNet(nn.Module):
    """Softmax policy (logits) and value V(s) over a shared torso, optionally followed by an LSTMCell.

    The caller carries the LSTM state between steps and must reset it (`initial_state`) at episode
    ends; passing state=None starts from zeros."""

    def __init__(self, obs_shape: Sequence[int], num_actions: int, hidden: Sequence[int] = (128,),
                 lstm: bool = False, lstm_units: int = 256):
        super().__init__()
        if len(obs_shape) == 3:
            self.torso: nn.Module = A3CCNN(obs_shape[0])
        else:
            self.torso = MLP(int(torch.Size(obs_shape).numel()), hidden)
        features = self.torso.out_features
        self.lstm = nn.LSTMCell(features, lstm_units) if lstm else None
        if self.lstm is not None:
            features = lstm_units
        self.policy = nn.Linear(features, num_actions)
        self.value = nn.Linear(features, 1)

    def initial_state(self, batch: int) -> LSTMState | None:
        if self.lstm is None:
            return None
        zeros = torch.zeros(batch, self.lstm.hidden_size, device=self.policy.weight.device)
        return zeros, zeros.clone()

    def forward(self, obs: torch.Tensor, state: LSTMState | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, LSTMState | None]:
        x = self.torso(obs)
        if self.lstm is not None:
            state = self.lstm(x, state if state is not None else self.initial_state(x.shape[0]))
            x = state[0]
        return self.policy(x), self.value(x).squeeze(-1), state


class GaussianPolicyValueNet(nn.Module):
    """Diagonal Gaussian policy for continuous actions: linear mean, softplus variance (+ floor), V(s)."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: Sequence[int] = (128,), var_floor: float = 1e-4):
        super().__init__()
        self.torso = MLP(obs_dim, hidden)
        self.mean = nn.Linear(self.torso.out_features, action_dim)
        self.var = nn.Linear(self.torso.out_features, action_dim)
        self.value = nn.Linear(self.torso.out_features, 1)
        self.var_floor = var_floor

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.torso(obs)
        return self.mean(x), F.softplus(self.var(x)) + self.var_floor, self.value(x).squeeze(-1)


def make_policy_value_net(obs_shape: Sequence[int], action_space: gym.Space, hidden: Sequence[int] = (128,),
                          lstm: bool = False) -> PolicyValueNet | GaussianPolicyValueNet:
    """Softmax PolicyValueNet for Discrete actions, GaussianPolicyValueNet for Box actions."""
    if isinstance(action_space, gym.spaces.Discrete):
        return PolicyValueNet(obs_shape, int(action_space.n), hidden, lstm=lstm)
    if isinstance(action_space, gym.spaces.Box):
        if lstm:
            raise ValueError("the Gaussian policy-value net has no LSTM variant")
        return GaussianPolicyValueNet(int(torch.Size(obs_shape).numel()), int(torch.Size(action_space.shape).numel()),
                                      hidden)
    raise ValueError(f"unsupported action space {action_space!r}: use Discrete or Box")
