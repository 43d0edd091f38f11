"""A network made for 42x42 frames, as a contender for issue 59's 2-core Pong: universe-starter-agent's torso
(four 3x3 stride-2 convolutions of 32, ELU: 42 -> 21 -> 11 -> 6 -> 3, 288 features) under Ape-X's dueling head,
its streams 256 wide (that agent's LSTM). Nature CNN on 42x42 frames made 2.7x the updates a second and did not
learn; this is the network the 42x42 anchor used. A bench contender through `net.factory`, not one of distrl's
networks: it joins distrl.nets only if a curve shows a gain.

    python -m bench.pong --seed 1 --eval-after 2000 --set screen_size=42 \\
        --set net.factory=factory:bench.small_frame_net:universe_q_network --budget-s 1800 --tag ..."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from gymnasium import spaces
from torch import nn

from distrl.nets.q_networks import DuelingHead, QNetwork, conv_body

STREAM_UNITS = 256  # universe-starter-agent's LSTM size


class UniverseCNN(nn.Module):
    """uint8 frame stacks in, scaled here as NatureCNN does; TensorFlow's SAME padding is padding=1 at 3x3."""

    def __init__(self, in_channels: int, frame: Sequence[int]):
        super().__init__()
        convs: list[nn.Module] = []
        for i in range(4):
            convs += [nn.Conv2d(in_channels if i == 0 else 32, 32, 3, stride=2, padding=1), nn.ELU()]
        self.body, self.out_features = conv_body(convs, (in_channels, *frame), None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float() / 255.0)


def universe_q(obs_shape: Sequence[int], num_actions: int) -> QNetwork:
    torso = UniverseCNN(obs_shape[0], obs_shape[1:])
    return QNetwork(torso, DuelingHead(torso.out_features, num_actions, hidden=STREAM_UNITS))


def universe_q_network(obs_space: spaces.Box, action_space: spaces.Discrete) -> QNetwork:
    """The `net.factory` form: distrl calls it with the env's spaces."""
    return universe_q(obs_space.shape, int(action_space.n))
