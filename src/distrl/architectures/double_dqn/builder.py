"""Double DQN as a builder: DQN's roles and actors; its learner's Adam takes the config's epsilon."""

from __future__ import annotations

import torch

from distrl.architectures.double_dqn.config import DoubleDQNConfig
from distrl.architectures.dqn.builder import DQN
from distrl.components.learner import DQNLearner


class DoubleDQN(DQN):
    """Its config is DoubleDQNConfig."""

    cfg: DoubleDQNConfig

    def make_learner(self, device: str = "cpu") -> DQNLearner:
        learner = super().make_learner(device)
        le = self.cfg.learner
        if le.optimizer == "adam":  # the learner's Adam has torch's epsilon; Rainbow's is learner.adam_eps
            learner.optimizer = torch.optim.Adam(learner.online.parameters(), lr=le.lr, eps=le.adam_eps)
        return learner
