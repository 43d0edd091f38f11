"""Ape-X DPG networks (Horgan et al. 2018, appendix D) for vector observations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from distrl.nets.activations import ACTIVATIONS
from distrl.nets.precision import in_float32


class DPGActor(nn.Module):
    """pi(s): 300 units, tanh, 200 units, tanh, then an action layer squashed into [low, high].

    The paper writes "300 units, tanh, 200 units"; a tanh follows the 200 units too, since two
    linear layers in a row would collapse into one. The squash is center + half_range * tanh, so
    actions never leave the bounds and keep a gradient (clipping would zero it at the edges).
    `activation` "relu" gives TD3's hidden layers; the output squash stays tanh. `obs_norm` (an ObsNorm,
    shared with the critic) normalises the observation first; by default it passes unchanged."""

    center: torch.Tensor  # buffers (register_buffer)
    half_range: torch.Tensor

    def __init__(self, obs_dim: int, action_dim: int, low: Sequence[float] | np.ndarray,
                 high: Sequence[float] | np.ndarray, hidden: Sequence[int] = (300, 200), activation: str = "tanh",
                 obs_norm: nn.Module | None = None):
        super().__init__()
        self.obs_norm = nn.Identity() if obs_norm is None else obs_norm
        low_t = torch.as_tensor(low, dtype=torch.float32).reshape(-1)
        high_t = torch.as_tensor(high, dtype=torch.float32).reshape(-1)
        self.register_buffer("center", (high_t + low_t) / 2)
        self.register_buffer("half_range", (high_t - low_t) / 2)
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(obs_dim, h), ACTIVATIONS[activation]()]
            obs_dim = h
        self.body = nn.Sequential(*layers)
        self.action = nn.Linear(obs_dim, action_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = self.body(self.obs_norm(obs.float().flatten(1)))
        return self.center + self.half_range * torch.tanh(in_float32(self.action, x))


class DPGCritic(nn.Module):
    """q(s, a): obs -> 400 tanh -> joined with the action -> 300 tanh -> scalar (as in DDPG, the
    action enters at the second layer).

    `action_layer` is the hidden layer whose input the action joins: 1 is DDPG's (the default), 0
    TD3's (the action joins the observation at the input). `activation` "relu" gives TD3's layers.
    `obs_norm` as DPGActor's."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: Sequence[int] = (400, 300), activation: str = "tanh",
                 action_layer: int = 1, obs_norm: nn.Module | None = None):
        super().__init__()
        self.obs_norm = nn.Identity() if obs_norm is None else obs_norm
        if not 0 <= action_layer < len(hidden):
            raise ValueError(f"the action joins hidden layer 0 to {len(hidden) - 1}, not {action_layer}")
        sizes = [obs_dim, *hidden]
        obs_layers: list[nn.Module] = []
        for i in range(action_layer):
            obs_layers += [nn.Linear(sizes[i], sizes[i + 1]), ACTIVATIONS[activation]()]
        joint: list[nn.Module] = []
        for i in range(action_layer, len(hidden)):
            joint += [nn.Linear(sizes[i] + (action_dim if i == action_layer else 0), sizes[i + 1]),
                      ACTIVATIONS[activation]()]
        self.obs_layer = nn.Sequential(*obs_layers)  # the names of the paper's layout: older checkpoints load
        self.joint = nn.Sequential(*joint, nn.Linear(sizes[-1], 1))

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = self.obs_layer(self.obs_norm(obs.float().flatten(1)))
        x = self.joint[:-1](torch.cat([x, action.float().reshape(x.shape[0], -1)], dim=1))
        return in_float32(self.joint[-1], x).squeeze(-1)


class UserCritic(nn.Module):
    """A user's critic, its values as DPGCritic gives them: shape (batch,)."""

    def __init__(self, critic: nn.Module):
        super().__init__()
        self.critic = critic

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.critic(obs, action).reshape(obs.shape[0])


def dpg_pair(actor: nn.Module, critic: nn.Module) -> nn.ModuleDict:
    """Actor and critic as one module: the learner publishes and actors load its state dict
    ("actor.<name>", "critic.<name>"), since Ape-X actors need the critic for initial priorities."""
    return nn.ModuleDict({"actor": actor, "critic": critic})
