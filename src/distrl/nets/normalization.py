"""Observation normalisation as a network layer, so its statistics travel with the weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from gymnasium.wrappers.utils import update_mean_var_count_from_moments
from torch import nn


class ObsNorm(nn.Module):
    """(obs - mean) / sqrt(var + eps), clipped to +-clip, with running statistics held as buffers.

    Gymnasium's NormalizeObservation keeps statistics per env, so N actors would normalise N ways and
    the replay would hold inputs on different scales. Here one learner owns the statistics (`update`
    from the raw observations it samples); actors, evaluators and checkpoints get them in the state
    dict with each parameter pull. The replay keeps raw observations. Before any update it is the
    identity (mean 0, variance 1), clipped."""

    mean: torch.Tensor  # buffers (register_buffer)
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: Sequence[int] | int, clip: float = 5.0, eps: float = 1e-8):
        super().__init__()
        self.clip, self.eps = clip, eps
        self.register_buffer("mean", torch.zeros(shape))
        self.register_buffer("var", torch.ones(shape))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return ((obs - self.mean) / torch.sqrt(self.var + self.eps)).clamp(-self.clip, self.clip)

    @torch.no_grad()
    def update(self, obs: np.ndarray) -> None:
        """Folds a batch [B, *shape] into the statistics (Chan et al.'s parallel mean and variance)."""
        x = np.asarray(obs, dtype=np.float64).reshape(len(obs), *self.mean.shape)
        mean, var, count = update_mean_var_count_from_moments(
            self.mean.cpu().double().numpy(), self.var.cpu().double().numpy(), float(self.count),
            x.mean(axis=0), x.var(axis=0), len(x))
        self.mean.copy_(torch.from_numpy(mean))
        self.var.copy_(torch.from_numpy(var))
        self.count.fill_(count)
