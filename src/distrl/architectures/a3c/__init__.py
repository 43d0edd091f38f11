"""The A3C family (Mnih et al. 2016): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.a3c.config import A3CConfig as CONFIG
from distrl.architectures.a3c.presets import PRESETS, choose_preset

NAME = "a3c"
BUILDER = "distrl.architectures.a3c.builder:A3C"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER", "choose_preset"]
