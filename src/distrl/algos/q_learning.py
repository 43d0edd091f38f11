"""Asynchronous value-based rules (Mnih et al. 2016): one-step Q, one-step Sarsa, n-step Q."""

from __future__ import annotations

import numpy as np
import torch

EPSILON_CHOICES = (0.1, 0.01, 0.5)
EPSILON_PROBS = (0.4, 0.3, 0.3)


def nstep_returns(rewards: torch.Tensor, dones: torch.Tensor, bootstrap: torch.Tensor | float,
                  gamma: float) -> torch.Tensor:
    """R_t = r_t + gamma * (1 - done_t) * R_{t+1}, R_T = bootstrap; rewards/dones are [T] or [T, B].

    Computed backwards like the paper's `for i in t-1..t_start` loop; a done at step t stops the
    bootstrap from crossing into the next episode. The bootstrap is detached: returns are targets.
    Shared by n-step Q and A3C."""
    rewards = rewards.float()
    dones = dones.to(rewards.dtype)
    ret = torch.as_tensor(bootstrap, dtype=rewards.dtype, device=rewards.device).detach().expand_as(rewards[0])
    out = torch.empty_like(rewards)
    for t in range(rewards.shape[0] - 1, -1, -1):
        ret = rewards[t] + gamma * (1.0 - dones[t]) * ret
        out[t] = ret
    return out


def onestep_q_targets(reward: torch.Tensor, done: torch.Tensor, next_q_target: torch.Tensor,
                      gamma: float) -> torch.Tensor:
    """y = r + gamma * (1 - done) * max_a Q_target(s', a) (one-step Q-learning, off-policy)."""
    return reward + gamma * (1.0 - done.float()) * next_q_target.max(dim=1).values


def sarsa_targets(reward: torch.Tensor, done: torch.Tensor, next_q_target: torch.Tensor,
                  next_action: torch.Tensor, gamma: float) -> torch.Tensor:
    """y = r + gamma * (1 - done) * Q_target(s', a'), with a' the action actually taken (on-policy)."""
    q_next = next_q_target.gather(1, next_action.long().unsqueeze(1)).squeeze(1)
    return reward + gamma * (1.0 - done.float()) * q_next


def q_loss(q: torch.Tensor, actions: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """1/2 (y - Q(s, a))^2 over the t_max segment, summed as the paper accumulates its steps'
    gradients ("sum") or averaged, which keeps the step size independent of the segment's length
    ("mean"). Targets carry no gradient."""
    q_sa = q.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    errors = 0.5 * (targets.detach() - q_sa).pow(2)
    return errors.sum() if reduction == "sum" else errors.mean()


def exploration_epsilons(num_workers: int, rng: np.random.Generator) -> np.ndarray:
    """Per-worker final epsilon from {0.1, 0.01, 0.5} w.p. {0.4, 0.3, 0.3} (paper, supplementary)."""
    return rng.choice(np.array(EPSILON_CHOICES), size=num_workers, p=np.array(EPSILON_PROBS))


def annealed_epsilon(final: float | np.ndarray, frames: int, anneal_frames: int = 4_000_000) -> float | np.ndarray:
    """Linear from 1.0 at frame 0 (and before) to `final` (one, or one per env) at `anneal_frames`, constant
    afterwards."""
    frac = min(max(frames / anneal_frames, 0.0), 1.0)
    return 1.0 + frac * (final - 1.0)
