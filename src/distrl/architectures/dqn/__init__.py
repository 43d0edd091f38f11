"""DQN (Mnih et al. 2015): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.dqn.config import DQNConfig as CONFIG
from distrl.architectures.dqn.presets import PRESETS

NAME = "dqn"
BUILDER = "distrl.architectures.dqn.builder:DQN"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
