"""Ape-X DPG networks (Horgan et al. 2018, appendix D) for vector observations."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class DPGActor(nn.Module):
    """pi(s): 300 units, tanh, 200 units, tanh, then an action layer squashed into [low, high].

    The paper writes "300 units, tanh, 200 units"; a tanh follows the 200 units too, since two
    linear layers in a row would collapse into one. The squash is center + half_range * tanh, so
    actions never leave the bounds and keep a gradient (clipping would zero it at the edges)."""

    def __init__(self, obs_dim: int, action_dim: int, low: Sequence[float], high: Sequence[float],
                 hidden: Sequence[int] = (300, 200)):
        super().__init__()
        low_t = torch.as_tensor(low, dtype=torch.float32).reshape(-1)
        high_t = torch.as_tensor(high, dtype=torch.float32).reshape(-1)
        self.register_buffer("center", (high_t + low_t) / 2)
        self.register_buffer("half_range", (high_t - low_t) / 2)
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(obs_dim, h), nn.Tanh()]
            obs_dim = h
        self.body = nn.Sequential(*layers)
        self.action = nn.Linear(obs_dim, action_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = self.body(obs.float().flatten(1))
        return self.center + self.half_range * torch.tanh(self.action(x))


class DPGCritic(nn.Module):
    """q(s, a): obs -> 400 tanh -> joined with the action -> 300 tanh -> scalar (as in DDPG, the
    action enters at the second layer)."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: Sequence[int] = (400, 300)):
        super().__init__()
        first, second = hidden
        self.obs_layer = nn.Sequential(nn.Linear(obs_dim, first), nn.Tanh())
        self.joint = nn.Sequential(nn.Linear(first + action_dim, second), nn.Tanh(), nn.Linear(second, 1))

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = self.obs_layer(obs.float().flatten(1))
        return self.joint(torch.cat([x, action.float().reshape(x.shape[0], -1)], dim=1)).squeeze(-1)


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
