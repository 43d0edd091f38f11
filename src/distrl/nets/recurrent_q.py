"""R2D2's recurrent Q-network (Kapturowski et al. 2019): a torso per observation kind, an LSTM fed the
torso's features with the previous action (one-hot) and reward, and a dueling head."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from distrl.nets.precision import in_float32
from distrl.nets.q_networks import MLP, DuelingHead, MinAtarCNN, NatureCNN
from distrl.nets.shapes import image_kind

LSTMState = tuple[torch.Tensor, torch.Tensor]  # (h, c), each [1, B, units] as nn.LSTM keeps them


class RecurrentQNetwork(nn.Module):
    """Q-values for each step of [T, B] sequences. Atari: the Nature convolutions (no dense layer), an
    LSTM of 512, a dueling head with 512-unit streams (the paper's; Acme's R2D2AtariNetwork). MinAtar:
    the MinAtar network's 128 units, then the LSTM; vectors: an MLP. The reward enters as tanh(r), as
    Acme's OAR embedding does, so the unclipped rewards R2D2 trains on stay in [-1, 1] there."""

    def __init__(self, obs_shape: Sequence[int], num_actions: int, *, lstm_units: int = 512,
                 hidden: Sequence[int] = (128,), head_hidden: int | None = None):
        super().__init__()
        kind = image_kind(obs_shape)
        if kind == "atari":
            self.torso: nn.Module = NatureCNN(obs_shape[0], fc_units=None, frame=obs_shape[1:])
            head_hidden = 512 if head_hidden is None else head_hidden
        elif kind == "minatar":
            self.torso = MinAtarCNN(obs_shape[0])
        else:
            self.torso = MLP(int(torch.Size(obs_shape).numel()), hidden)
        self.num_actions = num_actions
        self.lstm = nn.LSTM(self.torso.out_features + num_actions + 1, lstm_units)
        self.head = DuelingHead(lstm_units, num_actions, hidden=head_hidden or 0)

    def initial_state(self, batch: int) -> LSTMState:
        zeros = torch.zeros(1, batch, self.lstm.hidden_size, device=cast(torch.Tensor, self.lstm.weight_hh_l0).device)
        return zeros, zeros.clone()

    def embed(self, obs: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """[T, B, ...] observations with the previous step's action and reward -> the LSTM's [T, B, F] input."""
        steps, batch = obs.shape[:2]
        features = self.torso(obs.reshape(steps * batch, *obs.shape[2:])).reshape(steps, batch, -1)
        action = nn.functional.one_hot(prev_action.long(), self.num_actions).to(features.dtype)
        return torch.cat([features, action, torch.tanh(prev_reward.to(features.dtype)).unsqueeze(-1)], dim=-1)

    def forward(self, obs: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor,
                state: LSTMState | None = None) -> tuple[torch.Tensor, LSTMState]:
        """Q-values [T, B, A] over the sequence from `state` (None: zeros), and the state after it."""
        if state is None:
            state = self.initial_state(obs.shape[1])
        out, state = self.lstm(self.embed(obs, prev_action, prev_reward), state)
        return in_float32(self.head, out), state

    def burn_in(self, obs: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor,
                state: LSTMState, mask: torch.Tensor) -> LSTMState:
        """The state after the burn-in steps, without gradients: a step whose mask is False (the padding
        before an episode's first sequence) leaves the state as it was, so such a sequence starts its
        trace from its stored (initial) state exactly.

        A column's real steps are contiguous (the sequence adder pads only before an episode's start and
        after its end), so each set of columns with the same real span is unrolled in one LSTM call: a
        step-by-step loop made 20 calls of one step each, 4x the cost of one 20-step call on a CPU."""
        steps = obs.shape[0]
        if steps == 0:
            return state
        with torch.no_grad():
            x = self.embed(obs, prev_action, prev_reward)
            if bool(mask.all()):
                return self.lstm(x, state)[1]
            count = mask.sum(dim=0)
            first = mask.int().argmax(dim=0)
            t = torch.arange(steps, device=mask.device).unsqueeze(1)
            if not torch.equal(mask, (t >= first) & (t < first + count)):
                raise ValueError("a burn-in mask must mark one contiguous span of steps per sequence, as "
                                 "the sequence adder writes them")
            h, c = (s.clone() for s in state)
            spans = torch.stack([first, count], dim=1)
            for start, length in torch.unique(spans[count > 0], dim=0).tolist():
                cols = ((first == start) & (count == length)).nonzero().squeeze(1)
                _, (h_cols, c_cols) = self.lstm(x[start:start + length, cols], (h[:, cols], c[:, cols]))
                h[:, cols], c[:, cols] = h_cols.to(h.dtype), c_cols.to(c.dtype)
        return h, c
