"""Ape-X DPG (Horgan et al. 2018, appendix D): what the registry (distrl.architectures) takes from this package."""

from distrl.architectures.apex_dpg.config import ApexDPGConfig as CONFIG
from distrl.architectures.apex_dpg.presets import PRESETS, choose_preset

NAME = "apex-dpg"
BUILDER = "distrl.architectures.apex_dpg.builder:ApexDPG"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER", "choose_preset"]
