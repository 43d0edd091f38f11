"""bfloat16 in the learners (`learner.bf16`), for CPUs with bf16 units: the networks' hidden layers run in
autocast, their output layers in float32. A q of 1,000 in bfloat16 is 1,000 +- 4, a TD error's size."""

from __future__ import annotations

import torch
from torch import nn


def bf16_autocast(device: torch.device, enabled: bool) -> torch.autocast:
    """The learner's forward passes under bfloat16 autocast where `enabled`; a no-op context otherwise."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def in_float32(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """layer(x) in float32, also inside a bfloat16 autocast: for output layers."""
    with torch.autocast(x.device.type, enabled=False):
        return layer(x.float())
