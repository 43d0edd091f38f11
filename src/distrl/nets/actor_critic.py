"""Policy-value networks for A3C (Mnih et al. 2016): Atari CNN / MLP torso, optional LSTM."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from distrl.nets.activations import ACTIVATIONS
from distrl.nets.q_networks import MLP, MinAtarCNN
from distrl.nets.shapes import ATARI_FRAME, flat_width, image_kind

LSTMState = tuple[torch.Tensor, torch.Tensor]


class A3CCNN(nn.Module):
    """The A3C Atari torso (conv 16x8x8/4, conv 32x4x4/2, fc 256); scales uint8 frames like NatureCNN.
    `activation` "elu" replaces the paper's ReLUs: a ReLU unit below 0 on every state gets no gradient and
    stays dead, which killed the first convolution of A3C's 2-core Pong run (issue 59)."""

    def __init__(self, in_channels: int = 4, fc_units: int = 256, activation: str = "relu",
                 frame: Sequence[int] = ATARI_FRAME):
        super().__init__()
        act = ACTIVATIONS[activation]
        convs = [nn.Conv2d(in_channels, 16, 8, stride=4), act(), nn.Conv2d(16, 32, 4, stride=2), act()]
        self.body = nn.Sequential(  # 84 -> 20 -> 9: 32 x 9 x 9 features into the dense layer
            *convs, nn.Flatten(), nn.Linear(flat_width(convs, (in_channels, *frame)), fc_units), act())
        self.out_features = fc_units

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float() / 255.0)


class BA3CCNN(nn.Module):
    """The BA3C Atari torso (Adamski et al. 2018, after tensorpack's A3C model): four convolutions
    (32 5x5, 32 5x5, 64 4x4, 64 3x3), each followed by 2x2 max-pooling, then one fully connected
    layer whose width the paper cut from 256 to 128 units to shrink what workers and parameter
    servers exchange (84 -> 42 -> 21 -> 11 -> 5: 64 x 5 x 5 features into it)."""

    def __init__(self, in_channels: int = 4, fc_units: int = 128, frame: Sequence[int] = ATARI_FRAME):
        super().__init__()
        layers: list[nn.Module] = []
        for c_in, c_out, k in ((in_channels, 32, 5), (32, 32, 5), (32, 64, 4), (64, 64, 3)):
            layers += [nn.Conv2d(c_in, c_out, k, padding=k // 2), nn.ReLU(), nn.MaxPool2d(2)]
        width = flat_width(layers, (in_channels, *frame))
        self.body = nn.Sequential(*layers, nn.Flatten(), nn.Linear(width, fc_units), nn.ReLU())
        self.out_features = fc_units

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.float() / 255.0)


class PolicyValueNet(nn.Module):
    """Softmax policy (logits) and value V(s) over a shared torso, optionally followed by an LSTMCell.

    The caller carries the LSTM state between steps and must reset it (`initial_state`) at episode
    ends; passing state=None starts from zeros."""

    def __init__(self, obs_shape: Sequence[int], num_actions: int, hidden: Sequence[int] = (128,),
                 lstm: bool = False, lstm_units: int = 256, cnn: str = "a3c", activation: str = "relu"):
        """Atari stacks get the A3C CNN (`cnn="ba3c"`: the BA3C one, `hidden[0]` units wide), MinAtar frames
        the MinAtar network (both architectures), vectors an MLP. `activation` is the A3C CNN's."""
        super().__init__()
        kind = image_kind(obs_shape)
        if kind == "minatar":
            self.torso: nn.Module = MinAtarCNN(obs_shape[0])
        elif kind == "atari":
            frame = obs_shape[1:]
            self.torso = (A3CCNN(obs_shape[0], activation=activation, frame=frame) if cnn == "a3c"
                          else BA3CCNN(obs_shape[0], hidden[0], frame=frame))
        else:
            self.torso = MLP(int(torch.Size(obs_shape).numel()), hidden)
        features = self.torso.out_features
        self.lstm = nn.LSTMCell(features, lstm_units) if lstm else None
        if self.lstm is not None:
            features = lstm_units
        self.policy = nn.Linear(features, num_actions)
        self.value = nn.Linear(features, 1)

    def initial_state(self, batch: int) -> LSTMState | None:
        if self.lstm is None:
            return None
        zeros = torch.zeros(batch, self.lstm.hidden_size, device=self.policy.weight.device)
        return zeros, zeros.clone()

    def forward(self, obs: torch.Tensor, state: LSTMState | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, LSTMState | None]:
        x = self.torso(obs)
        if self.lstm is not None:
            state = self.lstm(x, state if state is not None else self.initial_state(x.shape[0]))
            x = state[0]
        return self.policy(x), self.value(x).squeeze(-1), state


class UserPolicyValue(nn.Module):
    """A user's network returning (logits, values), called as PolicyValueNet is: no recurrent state."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def initial_state(self, batch: int) -> None:
        return None

    def forward(self, obs: torch.Tensor, state: None = None) -> tuple[torch.Tensor, torch.Tensor, None]:
        logits, value = self.net(obs)
        return logits, value.reshape(value.shape[0]), None


class GaussianPolicyValueNet(nn.Module):
    """Diagonal Gaussian policy for continuous actions: softplus variance (+ floor), and V(s) from a
    separate torso (the paper's continuous-control networks share no parameters between policy and
    value). The mean is linear, then squashed by tanh into [low, high] when bounds are given: a
    purely linear mean ran to +-16 on Pendulum (bounds +-2), where clipped actions carry no gradient."""

    center: torch.Tensor  # buffers (register_buffer), when bounded
    half_range: torch.Tensor

    def __init__(self, obs_dim: int, action_dim: int, hidden: Sequence[int] = (128,), var_floor: float = 1e-4,
                 low: Sequence[float] | np.ndarray | None = None, high: Sequence[float] | np.ndarray | None = None):
        super().__init__()
        self.bounded = low is not None and high is not None
        if self.bounded:
            low_t, high_t = torch.as_tensor(low, dtype=torch.float32), torch.as_tensor(high, dtype=torch.float32)
            self.register_buffer("center", (high_t + low_t) / 2)
            self.register_buffer("half_range", (high_t - low_t) / 2)
        self.torso = MLP(obs_dim, hidden)
        self.mean = nn.Linear(self.torso.out_features, action_dim)
        self.var = nn.Linear(self.torso.out_features, action_dim)
        self.value_torso = MLP(obs_dim, hidden)
        self.value = nn.Linear(self.value_torso.out_features, 1)
        self.var_floor = var_floor

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.torso(obs)
        mean = self.mean(x)
        if self.bounded:
            mean = self.center + self.half_range * torch.tanh(mean)
        return (mean, F.softplus(self.var(x)) + self.var_floor,
                self.value(self.value_torso(obs)).squeeze(-1))


def make_policy_value_net(obs_shape: Sequence[int], action_space: gym.Space, hidden: Sequence[int] = (128,),
                          lstm: bool = False, activation: str = "relu") -> PolicyValueNet | GaussianPolicyValueNet:
    """Softmax PolicyValueNet for Discrete actions, GaussianPolicyValueNet for Box actions."""
    if isinstance(action_space, gym.spaces.Discrete):
        return PolicyValueNet(obs_shape, int(action_space.n), hidden, lstm=lstm, activation=activation)
    if isinstance(action_space, gym.spaces.Box):
        if lstm:
            raise ValueError("the Gaussian policy-value net has no LSTM variant")
        low, high = action_space.low.reshape(-1), action_space.high.reshape(-1)
        bounded = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
        return GaussianPolicyValueNet(int(torch.Size(obs_shape).numel()), int(torch.Size(action_space.shape).numel()),
                                      hidden, low=low if bounded else None, high=high if bounded else None)
    raise ValueError(f"unsupported action space {action_space!r}: use Discrete or Box")
