"""Distributed BA3C (Adamski et al. 2018): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.ba3c.config import BA3CConfig as CONFIG
from distrl.architectures.ba3c.presets import PRESETS

NAME = "ba3c"
BUILDER = "distrl.architectures.ba3c.builder:BA3C"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
