"""Building a run's config: the registry's tables (ARCHITECTURES, PRESETS: filled by
distrl.architectures from each architecture's package), the shared sections (sections.py), the
evaluation protocols and the default preset's rule (presets.py), `--set` parsing and validation (here).

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the
value is parsed by the leaf's declared type, so every key and value is checked on load."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import typing
from typing import Any

import numpy as np

from distrl.config.presets import (
    EVAL_PROTOCOLS,
    PRESET_RULES,
    PRESETS,
    PresetRule,
    choose_preset,
    default_preset,
    describe_preset,
    learning_start_frames,
)
from distrl.config.sections import (
    RUNTIMES,
    TRACKERS,
    InlineConfig,
    LearnerConfig,
    NetConfig,
    RayConfig,
    ReplayConfig,
    RunConfig,
    accepted_text,
    check,
    out_of_range,
)
from distrl.errors import ConfigError

# The registry: architecture -> its config class, filled by distrl.architectures (which `import distrl`
# loads first) from each package and from register_architecture.
ARCHITECTURES: dict[str, type] = {}

__all__ = ["ARCHITECTURES", "EVAL_PROTOCOLS", "LR_SAMPLES", "PRESETS", "PRESET_RULES", "PresetRule", "RUNTIMES",
           "TRACKERS", "InlineConfig", "LearnerConfig", "NetConfig", "RayConfig", "ReplayConfig", "RunConfig",
           "build_config", "choose_preset", "default_preset", "describe_preset", "dumps", "from_dict",
           "learning_start_frames", "leaf_keys", "parse_value", "resolve_architecture", "set_value", "to_dict",
           "validate"]

# ---------------------------------------------------------------- building and validation

def resolve_architecture(name: str) -> tuple[str, str]:
    """("module", "arch") for "module:arch", after importing the module (which registers arch, see
    distrl.architectures.register_architecture); ("", name) for a plain name."""
    module, sep, short = name.rpartition(":")
    if not sep:
        return "", name
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module!r} for architecture {short!r} ({exc}): give an importable "
                          "module that calls register_architecture, or a built-in architecture") from None
    return module, short


def build_config(architecture: str, env: str, preset: str | None = None,
                 overrides: dict[str, Any] | None = None) -> Any:
    """Defaults, then the preset, then explicit overrides (already typed or strings), then checks.
    `architecture` may be "module:name": the module is imported first (it registers name)."""
    module, architecture = resolve_architecture(architecture)
    if architecture not in ARCHITECTURES:
        raise ConfigError(f"unknown architecture {architecture!r}: choose one of {', '.join(ARCHITECTURES)}")
    cfg = ARCHITECTURES[architecture]()
    cfg.env, cfg.architecture_module = env, module
    overrides = overrides or {}
    actors = parse_value("actors", int, overrides["actors"]) if "actors" in overrides else None
    preset = preset or default_preset(architecture, env, str(overrides.get("algo", "")), actors)
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)} (see `distrl presets`)")
    arch, _, values = PRESETS[preset]
    if arch != architecture:
        raise ConfigError(f"preset {preset!r} is for {arch!r}, not {architecture!r}: see `distrl presets`")
    cfg.preset = preset
    named = {**values, **(overrides or {})}
    protocol = str(named.get("eval_protocol", ""))  # named by the preset or by --set: its values come first
    if protocol and protocol not in EVAL_PROTOCOLS:
        raise ConfigError(f"invalid value {protocol!r} for eval_protocol: accepted values are "
                          f"{', '.join(EVAL_PROTOCOLS)}")
    for key, value in {**EVAL_PROTOCOLS.get(protocol, {}), **named}.items():
        set_value(cfg, key, value)
    _draw_lr(cfg, overrides or {})  # a preset's own learner.lr gives way to the draw
    validate(cfg)
    return cfg


LR_SAMPLES = {"loguniform": (1e-4, 1e-2)}  # Mnih et al. 2016: each run's rate from LogUniform(1e-4, 1e-2)


def _draw_lr(cfg: Any, overrides: dict[str, Any]) -> None:
    """A3C's sampled learning rate, drawn once from the run's seed into learner.lr, so config.json (and
    --resume) keep the value drawn."""
    learner = getattr(cfg, "learner", None)
    sample = getattr(learner, "lr_sample", "")
    if not sample:
        return
    if sample not in LR_SAMPLES:
        raise ConfigError(f"invalid value {sample!r} for learner.lr_sample: accepted values are "
                          f"{', '.join(LR_SAMPLES)} (or empty for a fixed learner.lr)")
    if "learner.lr" in overrides:
        raise ConfigError("learner.lr_sample draws learner.lr: set one of them, not both")
    low, high = LR_SAMPLES[sample]
    rng = np.random.default_rng([cfg.seed, 0x1a])
    assert learner is not None  # it has an lr_sample
    learner.lr = float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _fields(obj: Any) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(obj)}


def leaf_keys(obj: Any, prefix: str = "") -> list[str]:
    keys = []
    for name in _fields(obj):
        value = getattr(obj, name)
        keys += leaf_keys(value, f"{prefix}{name}.") if dataclasses.is_dataclass(value) else [prefix + name]
    return keys


def set_value(cfg: Any, key: str, value: Any) -> None:
    path = key.split(".")
    target = cfg
    for part in path[:-1]:
        sub = getattr(target, part, None) if part in _fields(target) else None
        if not dataclasses.is_dataclass(sub):
            raise ConfigError(f"unknown config key {key!r}: valid keys are {', '.join(leaf_keys(cfg))}")
        target = sub
    name = path[-1]
    fields = _fields(target)
    if name not in fields or dataclasses.is_dataclass(getattr(target, name)):
        raise ConfigError(f"unknown config key {key!r}: valid keys are {', '.join(leaf_keys(cfg))}")
    hint = typing.get_type_hints(type(target))[name]
    setattr(target, name, parse_value(key, hint, value))


def parse_value(key: str, hint: Any, value: Any) -> Any:
    """Parse a string (or check a Python value) against the field's declared type."""
    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if hint is int:
            if isinstance(value, bool):
                raise ValueError
            number = float(value) if isinstance(value, str) else value
            if float(number) != int(number):
                raise ValueError
            return int(number)
        if hint is float:
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if hint is str:
            return value if isinstance(value, str) else str(value)  # a Factory (distrl/factory.py) stays one
        if typing.get_origin(hint) is tuple:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(int(str(v).strip()) for v in items if str(v).strip())
    except (TypeError, ValueError):
        pass
    else:
        raise ConfigError(f"config key {key!r} has an unsupported type {hint}")
    name = getattr(hint, "__name__", str(hint))
    example = {"bool": "true or false", "int": "a whole number like 4", "float": "a number like 0.5"}.get(
        name, "comma-separated whole numbers like 128,128")
    raise ConfigError(f"bad value {value!r} for {key}: expected {example}")


def check_ranges(obj: Any, prefix: str = "") -> None:
    """Every leaf declared with `ranged` (sections.py) against its range, depth first."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            check_ranges(value, f"{prefix}{f.name}.")
        elif "range" in f.metadata and out_of_range(value, f.metadata):
            check(False, prefix + f.name, value, accepted_text(str(f.type), f.metadata))


def validate(cfg: RunConfig) -> None:
    """The declared ranges, then what the config's own validate() says (RunConfig's checks, and its
    architecture's)."""
    check_ranges(cfg)
    cfg.validate()


def to_dict(cfg: Any) -> dict[str, Any]:
    """The config as JSON takes it: a non-finite float (stop_return's inf) as text, which parse_value reads back."""
    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return str(v) if isinstance(v, float) and not math.isfinite(v) else v
    return plain(dataclasses.asdict(cfg))


def from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a config saved as config.json (for --resume), checking every key again."""
    if isinstance(data, dict) and data.get("architecture_module"):
        resolve_architecture(f"{data['architecture_module']}:{data.get('architecture')}")
    if not isinstance(data, dict) or data.get("architecture") not in ARCHITECTURES:
        raise ConfigError("config.json does not hold a distrl config: the run directory is not a distrl run")
    cfg = ARCHITECTURES[data["architecture"]]()

    def walk(prefix: str, values: dict[str, Any]) -> None:
        for k, v in values.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                set_value(cfg, prefix + k, v)

    walk("", data)
    validate(cfg)
    return cfg


def dumps(cfg: Any) -> str:
    return json.dumps(to_dict(cfg), indent=2, sort_keys=False)
