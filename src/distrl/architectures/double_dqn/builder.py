"""Double DQN as a builder: DQN's roles, actors and learner; its config holds Rainbow's Adam values."""

from __future__ import annotations

from distrl.architectures.double_dqn.config import DoubleDQNConfig
from distrl.architectures.dqn.builder import DQN


class DoubleDQN(DQN):
    """Its config is DoubleDQNConfig."""

    cfg: DoubleDQNConfig
