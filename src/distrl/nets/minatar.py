"""The MinAtar network (Young & Tian 2019) and the choice of image torso by observation shape."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from distrl.errors import ConfigError

ATARI_FRAME = (84, 84)
MINATAR_FRAME = (10, 10)


class MinAtarCNN(nn.Module):
    """One 3x3 convolution (16 channels, stride 1, no padding: 10 -> 8), ReLU, then `fc_units` ReLU units
    (128 in the paper). MinAtar frames are 0/1 already, so they are only cast to float, not divided by 255."""

    def __init__(self, in_channels: int, fc_units: int | None = 128):
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(in_channels, 16, 3, stride=1), nn.ReLU(), nn.Flatten()]
        self.out_features = 16 * 8 * 8
        if fc_units:  # None leaves the conv features for a dueling head's own streams
            layers += [nn.Linear(self.out_features, fc_units), nn.ReLU()]
            self.out_features = fc_units
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float())


def image_kind(obs_shape: Sequence[int]) -> str | None:
    """None for observations an MLP takes (not 3-d), "atari" for (C, 84, 84) frame stacks, "minatar" for
    (C, 10, 10) frames; any other 3-d shape is refused with one line, before a net is built."""
    shape = tuple(int(d) for d in obs_shape)
    if len(shape) != 3:
        return None
    if shape[1:] == ATARI_FRAME:
        return "atari"
    if shape[1:] == MINATAR_FRAME:
        return "minatar"
    raise ConfigError(
        f"observation shape {shape}: no distrl network takes it (channel-first (C, 84, 84) Atari stacks get the "
        f"papers' CNNs, (C, 10, 10) MinAtar frames the MinAtar network, vectors an MLP); resize the frames to "
        f"84x84 with a Gymnasium wrapper (ResizeObservation) or flatten them (FlattenObservation)")
