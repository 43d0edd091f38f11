"""Torsos and Q heads: Nature CNN (Mnih et al. 2015), the MinAtar network (Young & Tian 2019), MLP,
dueling head (Wang et al. 2016)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from distrl.nets.precision import in_float32
from distrl.nets.shapes import ATARI_FRAME, MINATAR_FRAME, flat_width, image_kind


def conv_body(convs: list[nn.Module], in_shape: Sequence[int], fc_units: int | None) -> tuple[nn.Sequential, int]:
    """Convolutions on (C, H, W) inputs, flattened, then `fc_units` ReLU units (None leaves the conv features
    for a dueling head's own streams); returns the body and its output width."""
    conv_features = flat_width(convs, in_shape)
    layers = [*convs, nn.Flatten()]
    if fc_units:
        layers += [nn.Linear(conv_features, fc_units), nn.ReLU()]
    return nn.Sequential(*layers), fc_units or conv_features


class NatureCNN(nn.Module):
    """The DQN torso; takes uint8 frame stacks and scales them here so replay stays uint8. On the papers' 84x84
    frames the convolutions give 64 x 7 x 7 features; on smaller frames fewer (42x42: 64 x 1 x 1)."""

    def __init__(self, in_channels: int = 4, fc_units: int | None = 512, frame: Sequence[int] = ATARI_FRAME):
        super().__init__()
        self.body, self.out_features = conv_body([
            nn.Conv2d(in_channels, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
        ], (in_channels, *frame), fc_units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float() / 255.0)


class MinAtarCNN(nn.Module):
    """The MinAtar network's torso: one 3x3 convolution (16 channels, stride 1, no padding: 10 -> 8), ReLU,
    then `fc_units` ReLU units (128 in the paper). Its frames are 0/1 already: cast to float, not divided."""

    def __init__(self, in_channels: int, fc_units: int | None = 128):
        super().__init__()
        self.body, self.out_features = conv_body([nn.Conv2d(in_channels, 16, 3, stride=1), nn.ReLU()],
                                                 (in_channels, *MINATAR_FRAME), fc_units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float())


class MLP(nn.Module):
    """Fully connected torso for vector observations."""

    def __init__(self, in_features: int, hidden: Sequence[int] = (128, 128)):
        super().__init__()
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(in_features, h), nn.ReLU()]
            in_features = h
        self.body = nn.Sequential(*layers)
        self.out_features = in_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float().flatten(1))


class DuelingHead(nn.Module):
    """Q = V + A - mean(A): the identifiable dueling aggregation of Wang et al. (2016), eq. 9."""

    def __init__(self, in_features: int, num_actions: int, hidden: int = 0):
        super().__init__()

        def stream(out: int) -> nn.Module:
            if hidden:
                return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out))
            return nn.Linear(in_features, out)

        self.value = stream(1)
        self.advantage = stream(num_actions)

    @staticmethod
    def aggregate(value: torch.Tensor, advantage: torch.Tensor) -> torch.Tensor:
        return value + advantage - advantage.mean(dim=-1, keepdim=True)

    @staticmethod
    def output(stream: nn.Module, features: torch.Tensor) -> torch.Tensor:
        """A stream's hidden layer as autocast runs it, its output layer in float32 (learner.bf16)."""
        if isinstance(stream, nn.Sequential):
            features, stream = stream[:-1](features), stream[-1]
        return in_float32(stream, features)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.aggregate(self.output(self.value, features), self.output(self.advantage, features))


class QNetwork(nn.Module):
    def __init__(self, torso: nn.Module, head: nn.Module):
        super().__init__()
        self.torso = torso
        self.head = head

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        features = self.torso(obs)
        return self.head(features) if isinstance(self.head, DuelingHead) else in_float32(self.head, features)


def make_q_network(obs_shape: Sequence[int], num_actions: int, *, dueling: bool = True,
                   hidden: Sequence[int] = (128, 128)) -> QNetwork:
    """Nature CNN for Atari stacks (C, 84, 84) or smaller frames, the MinAtar network for (C, 10, 10), MLP for
    vectors.
    Dueling on Atari: the conv features feed two 512-unit streams (value, advantage), as in Wang et al.
    (2016). Dueling on MinAtar: the paper's network up to its 128 units, then the two linear heads
    aggregated (two 128-unit streams would double the fully connected work, the learner's main cost)."""
    kind = image_kind(obs_shape)
    if kind == "atari":
        if dueling:
            cnn = NatureCNN(obs_shape[0], fc_units=None, frame=obs_shape[1:])
            return QNetwork(cnn, DuelingHead(cnn.out_features, num_actions, hidden=512))
        cnn = NatureCNN(obs_shape[0], frame=obs_shape[1:])
        return QNetwork(cnn, nn.Linear(cnn.out_features, num_actions))
    torso = MinAtarCNN(obs_shape[0]) if kind == "minatar" else MLP(int(torch.Size(obs_shape).numel()), hidden)
    head = DuelingHead(torso.out_features, num_actions) if dueling else nn.Linear(torso.out_features, num_actions)
    return QNetwork(torso, head)
