"""The wirings: each says what to create and connect for one paper's system. `register_architecture`
adds one more under a name that `distrl.train` (and `distrl train`, where the module that registers
it is imported) runs on either placement."""

from __future__ import annotations

import importlib
from typing import Any

from distrl import config as C
from distrl.errors import ConfigError

WIRINGS: dict[str, Any] = {  # name -> "module:Class" (imported on first use) or a registered class
    "apex": "distrl.architectures.apex:Apex", "apex-dpg": "distrl.architectures.apex_dpg:ApexDPG",
    "gorila": "distrl.architectures.gorila:Gorila", "a3c": "distrl.architectures.a3c:A3C",
    "ba3c": "distrl.architectures.ba3c:BA3C", "dqn": "distrl.architectures.dqn:DQN",
    "r2d2": "distrl.architectures.r2d2:R2D2",
}


def make_architecture(cfg: Any) -> Any:
    """The wiring for cfg.architecture; it probes the env, so a bad env id fails here."""
    wiring = WIRINGS[cfg.architecture]
    if isinstance(wiring, str):
        module, _, name = wiring.partition(":")
        wiring = getattr(importlib.import_module(module), name)
    return wiring(cfg)


def register_architecture(name: str, wiring: type, config: type,
                          presets: dict[str, tuple[str, dict[str, Any]]] | None = None) -> None:
    """`wiring` (a Wiring subclass, built from a config) runs as architecture `name`, configured by
    `config` (a RunConfig dataclass whose defaults are its values) and `presets` ({preset: (source,
    values)}; without one named, a run gets the first). Registering the same classes again is a no-op."""
    if name in C.ARCHITECTURES and (C.ARCHITECTURES[name], WIRINGS.get(name)) != (config, wiring):
        raise ConfigError(f"architecture {name!r} is already registered to other classes: pick another name")
    C.ARCHITECTURES[name] = config
    WIRINGS[name] = wiring
    if not presets and not any(arch == name for arch, _, _ in C.PRESETS.values()):
        presets = {f"{name}-defaults": ("its config's defaults", {})}
    for preset, (source, values) in (presets or {}).items():
        C.PRESETS[preset] = (name, source, values)
