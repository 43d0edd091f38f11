"""Double DQN's config: DQN's (Mnih et al. 2015) with its three changes as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.architectures.dqn.config import DQNConfig, DQNLearnerConfig, DQNNetConfig
from distrl.config.sections import ranged


@dataclass
class DoubleDQNLearnerConfig(DQNLearnerConfig):
    double_q: bool = True  # the online network picks the next action, the target network values it
    optimizer: str = ranged("adam", choices=("rmsprop_centered", "adam"))
    lr: float = ranged(6.25e-5, gt=0)  # Rainbow's Adam step size
    adam_eps: float = ranged(1.5e-4, gt=0)  # Rainbow's Adam epsilon (LearnerConfig's is torch's 1e-8)


@dataclass
class DoubleDQNNetConfig(DQNNetConfig):
    dueling: bool = True  # a value and an advantage stream over the torso


@dataclass
class DoubleDQNConfig(DQNConfig):
    architecture: str = "double-dqn"
    learner: DoubleDQNLearnerConfig = field(default_factory=DoubleDQNLearnerConfig)
    net: DoubleDQNNetConfig = field(default_factory=DoubleDQNNetConfig)
