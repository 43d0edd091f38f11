"""A3C losses (Mnih et al. 2016): discrete softmax and continuous Gaussian policies."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

REDUCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"sum": torch.sum, "mean": torch.mean}


def _terms(log_prob: torch.Tensor, entropy: torch.Tensor, returns: torch.Tensor, values: torch.Tensor,
           value_coef: float, reduction: str) -> dict[str, torch.Tensor]:
    """policy = -reduce(log pi(a|s) * A) with A = (R - V) detached, so the policy term never pushes
    on the value head; value = value_coef * reduce((R - V)^2). value_coef=0.5 is the usual
    1/2 (R - V)^2 whose gradient is (R - V) dV, i.e. the paper's d(R - V)^2 up to a factor 2.
    `reduction` "sum" accumulates the steps' gradients as the paper's algorithms do (A3C's
    Algorithm S3 adds each step's gradient to d theta); "mean" divides that by the rollout's length
    (as BA3C's batches do)."""
    reduce = REDUCTIONS[reduction]
    advantage = returns - values
    return {"policy": -reduce(log_prob * advantage.detach()), "value": value_coef * reduce(advantage.pow(2)),
            "entropy": reduce(entropy)}


def _combine(terms: dict[str, torch.Tensor], entropy_beta: float) -> tuple[torch.Tensor, dict[str, float]]:
    total = terms["policy"] + terms["value"] - entropy_beta * terms["entropy"]
    return total, {name: term.item() for name, term in terms.items()}


def a3c_terms(logits: torch.Tensor, actions: torch.Tensor, returns: torch.Tensor, values: torch.Tensor,
              value_coef: float = 0.5, reduction: str = "mean") -> dict[str, torch.Tensor]:
    """The softmax loss's three terms as tensors, {"policy", "value", "entropy"}: the loss is
    policy + value - beta * entropy. Apart for whoever needs each term's own gradient (bench.loss_terms)."""
    log_pi = F.log_softmax(logits, dim=-1)
    log_prob = log_pi.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    entropy = -(log_pi.exp() * log_pi).sum(dim=-1)
    return _terms(log_prob, entropy, returns, values, value_coef, reduction)


def a3c_loss(logits: torch.Tensor, actions: torch.Tensor, returns: torch.Tensor, values: torch.Tensor,
             entropy_beta: float = 0.01, value_coef: float = 0.5,
             reduction: str = "mean") -> tuple[torch.Tensor, dict[str, float]]:
    """total = policy + value - beta * entropy for a softmax policy over `logits` [B, A].

    Returns (scalar total, {"policy", "value", "entropy"} as floats)."""
    return _combine(a3c_terms(logits, actions, returns, values, value_coef, reduction), entropy_beta)


def gaussian_log_prob(action: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """log N(a; mu, var) of a diagonal Gaussian, summed over the last (action) dimension."""
    return (-0.5 * ((action - mean).pow(2) / var + torch.log(2 * math.pi * var))).sum(dim=-1)


def gaussian_entropy(var: torch.Tensor) -> torch.Tensor:
    """H = 1/2 ln(2 pi e var), summed over the last (action) dimension."""
    return (0.5 * torch.log(2 * math.pi * math.e * var)).sum(dim=-1)


def a3c_continuous_loss(mean: torch.Tensor, var: torch.Tensor, actions: torch.Tensor, returns: torch.Tensor,
                        values: torch.Tensor, entropy_beta: float = 1e-4,
                        value_coef: float = 0.5, reduction: str = "mean") -> tuple[torch.Tensor, dict[str, float]]:
    """The A3C loss for a Gaussian policy (linear mean, softplus variance, as in the paper's MuJoCo runs)."""
    log_prob = gaussian_log_prob(actions, mean, var)
    return _combine(_terms(log_prob, gaussian_entropy(var), returns, values, value_coef, reduction), entropy_beta)
