"""Ape-X DQN (Horgan et al. 2018): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.apex.config import ApexConfig as CONFIG
from distrl.architectures.apex.presets import PRESETS

NAME = "apex"
BUILDER = "distrl.architectures.apex.builder:Apex"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
