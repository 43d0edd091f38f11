"""The registry of architectures. Each built-in one is a package here (apex/, gorila/, ...: its config,
its presets with their sources, its builder), found by looking, so a new architecture is one package
and touches no other file. `register_architecture` adds one from anywhere else under a name that
`distrl.train` (and `distrl train`, where the module that registers it is imported) runs on either
placement. `import distrl` loads this module, so the config tables (distrl.config) are filled
before any config is built."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, cast

from distrl import config as C
from distrl.errors import ConfigError

if TYPE_CHECKING:  # import distrl loads no torch (contracts.py imports it)
    from distrl.contracts import Builder

BUILDERS: dict[str, Any] = {}  # name -> "module:Class" (imported on first use) or a registered class
PACKAGES: dict[str, str] = {}  # the built-in ones: name -> its package's name here (apex-dpg: apex_dpg)


def make_architecture(cfg: Any) -> Builder:
    """The builder for cfg.architecture; it probes the env, so a bad env id fails here."""
    builder = BUILDERS[cfg.architecture]
    if isinstance(builder, str):
        module, _, name = builder.partition(":")
        builder = getattr(importlib.import_module(module), name)
    return cast("Builder", builder(cfg))


def register_architecture(name: str, builder: type | str, config: type,
                          presets: dict[str, tuple[str, dict[str, Any]]] | None = None,
                          choose_preset: C.PresetRule | None = None) -> None:
    """`builder` (a class built from a config whose topology() gives the run's Topology, as
    architectures/dqn/builder.py's; or "module:Class" to import on first use) runs as architecture
    `name`, configured by `config` (a RunConfig dataclass whose defaults are its values; its validate()
    checks what its ranges do not) and `presets` ({preset: (source, values)}; without one named, a run
    gets the one `choose_preset(env_id, algo, actors)` names, else the env's kind's, else the first).
    Registering the same classes again is a no-op."""
    if name in C.ARCHITECTURES and (C.ARCHITECTURES[name], BUILDERS.get(name)) != (config, builder):
        raise ConfigError(f"architecture {name!r} is already registered to other classes: pick another name")
    C.ARCHITECTURES[name] = config
    BUILDERS[name] = builder
    if choose_preset is not None:
        C.PRESET_RULES[name] = choose_preset
    if not presets and not any(arch == name for arch, _, _ in C.PRESETS.values()):
        presets = {f"{name}-defaults": ("its config's defaults", {})}
    for preset, (source, values) in (presets or {}).items():
        C.PRESETS[preset] = (name, source, values)


def _register_packages() -> None:
    """Every package here that names an architecture (NAME, CONFIG, PRESETS, BUILDER; choose_preset
    optionally), in the order of their names."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(package, "NAME"):
            register_architecture(package.NAME, package.BUILDER, package.CONFIG, package.PRESETS,
                                  getattr(package, "choose_preset", None))
            PACKAGES[package.NAME] = info.name


_register_packages()
