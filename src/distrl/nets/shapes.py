"""Which torso an observation shape gets: Atari frame stacks, MinAtar frames, vectors, or a clear refusal."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from distrl.errors import ConfigError

ATARI_FRAME = (84, 84)  # the papers' frames, and the size of the frames make_env gives by default
SMALLEST_ATARI_FRAME = 36  # Nature CNN's three convolutions need 36 pixels a side (36 -> 8 -> 3 -> 1)
MINATAR_FRAME = (10, 10)


def image_kind(obs_shape: Sequence[int]) -> str | None:
    """None for observations an MLP takes (not 3-d), "atari" for (C, H, W) frame stacks of at least 36x36
    (the papers' 84x84, or smaller frames such as universe-starter-agent's 42x42), "minatar" for (C, 10, 10)
    frames; any other 3-d shape is refused with one line, before a net is built."""
    shape = tuple(int(d) for d in obs_shape)
    if len(shape) != 3:
        return None
    if shape[1:] == MINATAR_FRAME:
        return "minatar"
    if min(shape[1:]) >= SMALLEST_ATARI_FRAME:
        return "atari"
    raise ConfigError(
        f"observation shape {shape}: no distrl network takes it (channel-first (C, H, W) frame stacks of at least "
        f"{SMALLEST_ATARI_FRAME}x{SMALLEST_ATARI_FRAME}, such as Atari's (C, 84, 84), get the papers' CNNs, "
        f"(C, 10, 10) MinAtar frames the MinAtar network, vectors an MLP); resize the frames to 84x84 with a "
        f"Gymnasium wrapper (ResizeObservation), flatten them (FlattenObservation), or bring a network "
        f"(distrl.train(network=...) or --set net.factory=module:function)")


def flat_width(layers: Sequence[nn.Module], in_shape: Sequence[int]) -> int:
    """How many features `layers` give for one (C, H, W) input, by a forward pass on zeros: the width of the
    dense layer after a CNN's convolutions, for whatever frame size the env gives."""
    with torch.no_grad():
        return int(nn.Sequential(*layers, nn.Flatten())(torch.zeros(1, *in_shape)).shape[1])
