"""R2D2 (Kapturowski et al. 2019): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.r2d2.config import R2D2Config as CONFIG
from distrl.architectures.r2d2.presets import PRESETS

NAME = "r2d2"
BUILDER = "distrl.architectures.r2d2.builder:R2D2"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
