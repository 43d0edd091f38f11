"""Double DQN as a wiring: DQN's roles and actors; its learner's Adam takes the config's epsilon."""

from __future__ import annotations

import torch

from distrl.architectures.dqn.wiring import DQN
from distrl.components.learner import DQNLearner


class DoubleDQN(DQN):
    """Its config is DoubleDQNConfig."""

    architecture = "double-dqn"

    def make_learner(self, device: str = "cpu") -> DQNLearner:
        learner = super().make_learner(device)
        le = self.cfg.learner
        if le.optimizer == "adam":  # the learner's Adam has torch's epsilon; Rainbow's is learner.adam_eps
            learner.optimizer = torch.optim.Adam(learner.online.parameters(), lr=le.lr, eps=le.adam_eps)
        return learner
