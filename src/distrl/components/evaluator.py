"""The evaluation component: a frozen copy of the policy run under the evaluation protocol."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from distrl.components.policy import Policy
from distrl.envs import evaluate
from distrl.envs.scores import human_normalized


class Evaluator:
    """A greedy policy (components/policy.py) with a small epsilon (0.001 by default) on the eval env
    (no-op starts on Atari); `policy` is the Policy kind for the net's output."""

    def __init__(self, env_id: str, net: nn.Module, *, episodes: int = 20, epsilon: float = 0.001,
                 seed: int = 0, max_episode_frames: int | None = None, policy: str = "q"):
        self.env_id, self.net, self.policy = env_id, net, Policy(net, policy)
        self.episodes, self.epsilon, self.seed = episodes, epsilon, seed
        self.max_episode_frames = max_episode_frames

    def evaluate(self, params: dict[str, torch.Tensor]) -> dict:
        self.net.load_state_dict(params)
        return self.run()

    def run(self) -> dict:
        """The protocol's episodes with the parameters the net holds."""
        returns = evaluate(self.env_id, self.policy, self.episodes, epsilon=self.epsilon, seed=self.seed,
                           max_episode_frames=self.max_episode_frames)
        mean = float(np.mean(returns)) if returns else float("nan")
        return {"returns": [float(r) for r in returns], "mean": mean,
                "std": float(np.std(returns)) if returns else float("nan"),
                "episodes": len(returns), "epsilon": self.epsilon,
                "human_normalized": human_normalized(self.env_id, mean) if returns else None}
