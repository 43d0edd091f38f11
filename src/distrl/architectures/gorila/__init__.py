"""Gorila DQN (Nair et al. 2015): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.gorila.config import GorilaConfig as CONFIG
from distrl.architectures.gorila.presets import PRESETS

NAME = "gorila"
BUILDER = "distrl.architectures.gorila.builder:Gorila"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
