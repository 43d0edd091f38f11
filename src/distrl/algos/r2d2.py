"""R2D2's learning rules (Kapturowski et al. 2019): the invertible value rescaling that replaces reward
clipping (Pohlen et al. 2018), n-step double-Q targets through it over a sequence, and the priority of a
sequence from its TD errors."""

from __future__ import annotations

import torch

RESCALE_EPS = 1e-3  # the paper's epsilon in h
PRIORITY_ETA = 0.9  # the paper's mix of the max and the mean |TD error| of a sequence


def value_rescale(x: torch.Tensor, eps: float = RESCALE_EPS) -> torch.Tensor:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x."""
    return torch.sign(x) * (torch.sqrt(x.abs() + 1.0) - 1.0) + eps * x


def inverse_value_rescale(x: torch.Tensor, eps: float = RESCALE_EPS) -> torch.Tensor:
    """h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1), Pohlen et al.'s closed form."""
    root = (torch.sqrt(1.0 + 4.0 * eps * (x.abs() + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return torch.sign(x) * (root.pow(2) - 1.0)


def rescaled_nstep_targets(rewards: torch.Tensor, discounts: torch.Tensor, bootstrap: torch.Tensor, n: int,
                           eps: float = RESCALE_EPS) -> torch.Tensor:
    """The n-step double-Q targets of a sequence, in rescaled space: for each step t of [T, B],
    y_t = h(r_t + d_t r_{t+1} + ... + d_t...d_{t+m-2} r_{t+m-1} + d_t...d_{t+m-1} h^-1(bootstrap_{t+m-1})),
    m = min(n, T - t): near the sequence's end the horizon shortens to what the sequence holds.

    discounts_t = gamma * (1 - done_t) for the step from s_t to s_{t+1}, so a done stops the sum there;
    bootstrap_t = Q_target(s_{t+1}, argmax_a Q_online(s_{t+1}, a)), the double-Q value of the next state
    (rescaled, as the networks output it). Computed as rlax's n_step_bootstrapped_returns, backwards
    over n shifted copies; the result carries no gradient (targets)."""
    steps = rewards.shape[0]
    values = inverse_value_rescale(bootstrap.detach(), eps)
    pad = min(n - 1, steps)
    # The bootstrap n steps on, the last state's value past the sequence's end.
    targets = torch.cat([values[n - 1:], values[-1:].expand(pad, *values.shape[1:])])
    rewards = torch.cat([rewards.float(), rewards.new_zeros(n - 1, *rewards.shape[1:])])
    discounts = torch.cat([discounts.float(), discounts.new_ones(n - 1, *discounts.shape[1:])])
    for i in reversed(range(n)):
        targets = rewards[i:i + steps] + discounts[i:i + steps] * targets
    return value_rescale(targets, eps).detach()


def sequence_priorities(td_errors: torch.Tensor, mask: torch.Tensor | None = None,
                        eta: float = PRIORITY_ETA) -> torch.Tensor:
    """p = eta max_t |delta_t| + (1 - eta) mean_t |delta_t| over a sequence's real steps ([T, B] -> [B])."""
    magnitude = td_errors.detach().abs()
    if mask is None:
        return eta * magnitude.max(dim=0).values + (1.0 - eta) * magnitude.mean(dim=0)
    magnitude = magnitude * mask
    mean = magnitude.sum(dim=0) / mask.sum(dim=0).clamp(min=1)
    return eta * magnitude.max(dim=0).values + (1.0 - eta) * mean


def sequence_td_errors(q_online: torch.Tensor, q_target: torch.Tensor, actions: torch.Tensor,
                       rewards: torch.Tensor, discounts: torch.Tensor, mask: torch.Tensor, n: int,
                       eps: float = RESCALE_EPS) -> torch.Tensor:
    """TD errors [T, B] of a trace's steps: Q(s_t, a_t) against the rescaled n-step double-Q target.

    q_online, q_target: [T+1, B, A] over the trace and the state after it (both burned in from the stored
    state); actions, rewards, discounts, mask: [T, B]. Steps past an episode's end (mask False) are
    padding: there the sum goes on with reward 0 and discount 1 to the value of the state after the last
    real step, so a step near a truncation still bootstraps from it (a terminal's discount 0 stops it
    first); their errors are 0. Gradients flow through Q(s_t, a_t) only."""
    q_taken = q_online[:-1].gather(2, actions.long().unsqueeze(-1)).squeeze(-1)
    best = q_online[1:].detach().argmax(dim=-1, keepdim=True)
    bootstrap = q_target[1:].detach().gather(2, best).squeeze(-1)
    last = (mask.sum(dim=0) - 1).clamp(min=0).long()  # the last real step of each column (the trace's padding is at its end)
    bootstrap = torch.where(mask, bootstrap, bootstrap.gather(0, last.unsqueeze(0)).expand_as(bootstrap))
    discounts = torch.where(mask, discounts.to(q_taken.dtype), torch.ones_like(q_taken))
    rewards = torch.where(mask, rewards.to(q_taken.dtype), torch.zeros_like(q_taken))
    targets = rescaled_nstep_targets(rewards, discounts, bootstrap, n, eps)
    return torch.where(mask, targets - q_taken, torch.zeros_like(q_taken))


def sequence_loss(td_errors: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """1/2 the mean squared TD error over each sequence's real steps, importance-weighted per sequence
    ([B] weights), averaged over the batch."""
    per_sequence = 0.5 * (td_errors.pow(2) * mask).sum(dim=0) / mask.sum(dim=0).clamp(min=1)
    return (weights * per_sequence).mean()
