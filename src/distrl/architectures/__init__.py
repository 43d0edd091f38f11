"""The wirings: each says what to create and connect for one paper's system."""

from __future__ import annotations

from typing import Any


def make_architecture(cfg: Any) -> Any:
    """The wiring for cfg.architecture; it probes the env, so a bad env id fails here."""
    from distrl.architectures.a3c import A3C
    from distrl.architectures.apex import Apex
    from distrl.architectures.apex_dpg import ApexDPG
    from distrl.architectures.ba3c import BA3C
    from distrl.architectures.dqn import DQN
    from distrl.architectures.gorila import Gorila
    return {"apex": Apex, "gorila": Gorila, "a3c": A3C, "ba3c": BA3C, "apex-dpg": ApexDPG,
            "dqn": DQN}[cfg.architecture](cfg)
