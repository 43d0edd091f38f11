"""A trained network as a policy: the action rule the evaluator plays and `distrl.load_policy` returns."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch
from torch import nn

KINDS = ("q", "softmax", "gaussian", "deterministic", "recurrent_q")


class Policy:
    """Picks actions from `net`'s output: the argmax of Q-values (`kind="q"`), of a softmax policy's logits
    (an LSTM's state carried between calls until `reset()`), a Gaussian policy's mean, or the output of
    the "actor" of DPG's actor-critic pair. `epsilon` replaces that many of the discrete actions by a
    uniformly random one (value-based evaluation protocols)."""

    def __init__(self, net: nn.Module, kind: str = "q", epsilon: float = 0.0, seed: int | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown policy kind {kind!r}: one of {', '.join(KINDS)}")
        self.net, self.kind, self.epsilon = net.eval(), kind, epsilon
        self.rng = np.random.default_rng(seed)
        self.reset()
        self.checkpoint: str | None = None  # set by distrl.load_policy: which file, after how many updates
        self.updates: int | None = None
        self.watch()

    def watch(self) -> None:
        """From now on, track how far the net's outputs spread over the observations it is called on."""
        self._low: torch.Tensor | None = None
        self._high: torch.Tensor | None = None

    def spread(self) -> float | None:
        """The largest spread of any one output over the observations since watch() (None: none seen). 0 means
        the net gave one output everywhere: a dead network, whose ReLU units no longer fire."""
        if self._low is None or self._high is None:
            return None
        return float((self._high - self._low).max())

    def _seen(self, out: torch.Tensor) -> torch.Tensor:
        flat = out.reshape(out.shape[0], -1).float()
        low, high = flat.min(0).values, flat.max(0).values
        self._low = low if self._low is None else torch.minimum(self._low, low)
        self._high = high if self._high is None else torch.maximum(self._high, high)
        return out

    def reset(self) -> None:
        """A new episode: an LSTM policy starts again from its initial state."""
        self._state = None
        self._previous = (torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, 1))

    def observe(self, action: Any, reward: float) -> None:
        """The action taken (perhaps a random one) and the reward it brought: a recurrent Q policy's next
        input (other kinds need neither)."""
        if self.kind == "recurrent_q":
            self._previous = (torch.tensor([[int(action)]]), torch.tensor([[float(reward)]]))

    @torch.no_grad()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """A batch of greedy actions for a batch of observations (what `distrl.envs.evaluate` calls)."""
        x = torch.as_tensor(np.asarray(obs))
        if self.kind == "deterministic":
            return self._seen(cast(nn.ModuleDict, self.net)["actor"](x)).numpy()  # dpg_pair's
        if self.kind == "gaussian":
            return self._seen(self.net(x)[0]).numpy()
        if self.kind == "recurrent_q":  # one env: [1, 1, ...] through the sequence network
            scores, self._state = self.net(x[None], *self._previous, self._state)
            seen = self._seen(scores[0])
            self.actions = int(seen.shape[1])
            return seen.argmax(dim=1).numpy()
        scores = self.net(x) if self.kind == "q" else self.net(x, self._state)
        if self.kind == "softmax":
            scores, _, self._state = scores
        self._seen(scores)
        self.actions = int(scores.shape[1])  # the number of discrete actions, for epsilon's random ones
        return cast(np.ndarray, scores.argmax(dim=1).numpy())

    def act(self, observation: Any) -> Any:
        """The action for one observation as the env returns it: an int for discrete actions (random with
        probability epsilon), an array for continuous ones."""
        action = self(np.asarray(observation)[None])[0]
        if self.kind in ("q", "softmax", "recurrent_q"):
            if self.epsilon and self.rng.random() < self.epsilon:
                return int(self.rng.integers(self.actions))
            return int(action)
        return action
