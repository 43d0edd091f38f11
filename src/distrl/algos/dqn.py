"""DQN learning rules as pure functions of tensors (Ape-X: n-step double-Q; Gorila: 1-step Q)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def double_q_targets(reward: torch.Tensor, discount: torch.Tensor, q_next_online: torch.Tensor,
                     q_next_target: torch.Tensor) -> torch.Tensor:
    """G = R^(n) + gamma^n * q_target(s', argmax_a q_online(s', a)).

    `discount` is gamma^k from the adder, already zero where the episode terminated."""
    best = q_next_online.argmax(dim=1, keepdim=True)
    return reward + discount * q_next_target.gather(1, best).squeeze(1)


def q_targets(reward: torch.Tensor, discount: torch.Tensor, q_next_target: torch.Tensor) -> torch.Tensor:
    """G = R^(n) + gamma^n * max_a q_target(s', a) (the Nature DQN / Gorila target)."""
    return reward + discount * q_next_target.max(dim=1).values


def td_loss(q: torch.Tensor, action: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None = None,
            kind: str = "mse") -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted mean of l = 1/2 (G - q(s, a))^2 (Ape-X) or the Huber loss (Nature DQN).

    Returns (scalar loss, TD errors G - q(s, a)); the target carries no gradient."""
    q_sa = q.gather(1, action.long().unsqueeze(1)).squeeze(1)
    td = target.detach() - q_sa
    if kind == "mse":
        per_item = 0.5 * td.pow(2)
    elif kind == "huber":
        per_item = F.huber_loss(q_sa, target.detach(), reduction="none", delta=1.0)
    else:
        raise ValueError(f"unknown loss kind {kind!r}: use 'mse' or 'huber'")
    if weights is not None:
        per_item = per_item * weights
    return per_item.mean(), td.detach()


def nstep_td_priorities(q: np.ndarray, action: np.ndarray, reward: np.ndarray, discount: np.ndarray,
                        q_next: np.ndarray) -> np.ndarray:
    """Actor-side initial priorities |R + gamma^k max_a q(s', a) - q(s, a)| from buffered Q-values.

    Actors hold no target network, so they bootstrap from their own copy (Ape-X, appendix F)."""
    q_sa = q[np.arange(len(action)), action]
    return np.abs(reward + discount * q_next.max(axis=1) - q_sa)
