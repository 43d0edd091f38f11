"""Ape-X DPG learning rules (Horgan et al. 2018, appendix D) and TD3's options (Fujimoto et al. 2018)
as pure functions of tensors.

The actor's element-wise gradient clipping to [-1, 1] is torch.nn.utils.clip_grad_value_, which
clamps every gradient element in place: exactly the rule, so distrl has no function of its own."""

from __future__ import annotations

import torch
from torch import nn


def dpg_critic_targets(reward: torch.Tensor, discount: torch.Tensor, next_q_target: torch.Tensor) -> torch.Tensor:
    """G = R^(n) + gamma^n q(s_{t+n}, pi(s_{t+n}; phi^-); psi^-), detached.

    `discount` is gamma^k from the n-step adder, already zero where the episode terminated."""
    return (reward + discount * next_q_target).detach()


def dpg_critic_loss(q: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Importance-weighted mean of 1/2 (G - q(s, a))^2; returns (loss, detached TD errors G - q)."""
    td = target.detach() - q
    per_item = 0.5 * td.pow(2)
    if weights is not None:
        per_item = per_item * weights
    return per_item.mean(), td.detach()


def dpg_actor_loss(q_of_pi: torch.Tensor) -> torch.Tensor:
    """-mean q(s, pi(s)): descending it ascends the critic's value of the policy's actions."""
    return -q_of_pi.mean()


def smoothed_target_action(action: torch.Tensor, noise: torch.Tensor, clip: float, low: torch.Tensor,
                           high: torch.Tensor) -> torch.Tensor:
    """TD3's target policy smoothing (Fujimoto et al. 2018, eq. 15): pi'(s') + clip(noise, -c, c),
    then clipped to the action bounds, so the critic's target averages q over nearby actions."""
    return torch.maximum(torch.minimum(action + noise.clamp(-clip, clip), high), low)


@torch.no_grad()
def polyak_update(target: nn.Module, online: nn.Module, tau: float) -> None:
    """theta^- <- (1 - tau) theta^- + tau theta on every parameter (DDPG's soft target update);
    buffers (the actor's bounds) are constants and stay as they are."""
    for t, p in zip(target.parameters(), online.parameters(), strict=True):
        t.lerp_(p, tau)
