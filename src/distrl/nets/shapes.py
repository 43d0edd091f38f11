"""Which torso an observation shape gets: Atari frame stacks, MinAtar frames, vectors, or a clear refusal."""

from __future__ import annotations

from collections.abc import Sequence

from distrl.errors import ConfigError

ATARI_FRAME = (84, 84)
MINATAR_FRAME = (10, 10)


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
        f"84x84 with a Gymnasium wrapper (ResizeObservation), flatten them (FlattenObservation), or bring a network "
        f"(distrl.train(network=...) or --set net.factory=module:function)")
