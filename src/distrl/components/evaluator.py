"""The evaluation component: a frozen copy of the policy run under the evaluation protocol."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from distrl.envs import evaluate
from distrl.envs.scores import human_normalized


class Evaluator:
    """Greedy policy with a small epsilon (0.001 by default) on the eval env (no-op starts on Atari).

    `policy` picks the action from the net's output: argmax of Q-values (the default), argmax of a
    softmax policy's logits, a Gaussian policy's mean, or (deterministic) the output of the net's
    "actor" (DPG's actor-critic pair); an LSTM's state is reset every episode."""

    def __init__(self, env_id: str, net: nn.Module, *, episodes: int = 20, epsilon: float = 0.001,
                 seed: int = 0, max_episode_frames: int | None = None, policy: str = "q"):
        self.env_id, self.net = env_id, net.eval()
        self.episodes, self.epsilon, self.seed = episodes, epsilon, seed
        self.max_episode_frames, self.policy = max_episode_frames, policy
        self._state = None

    def reset(self) -> None:
        self._state = None

    @torch.no_grad()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """A batch of actions for a batch of observations (the `act` that `evaluate` calls)."""
        if self.policy == "deterministic":
            return self.net["actor"](torch.as_tensor(obs)).numpy()
        out = self.net(torch.as_tensor(obs)) if self.policy != "softmax" else self.net(torch.as_tensor(obs),
                                                                                        self._state)
        if self.policy == "q":
            return out.argmax(dim=1).numpy()
        if self.policy == "gaussian":
            return out[0].numpy()
        self._state = out[2]
        return out[0].argmax(dim=1).numpy()

    def evaluate(self, params: dict[str, torch.Tensor]) -> dict:
        self.net.load_state_dict(params)
        returns = evaluate(self.env_id, self, self.episodes, epsilon=self.epsilon, seed=self.seed,
                           max_episode_frames=self.max_episode_frames)
        mean = float(np.mean(returns)) if returns else float("nan")
        return {"returns": [float(r) for r in returns], "mean": mean,
                "std": float(np.std(returns)) if returns else float("nan"),
                "episodes": len(returns), "epsilon": self.epsilon,
                "human_normalized": human_normalized(self.env_id, mean) if returns else None}
