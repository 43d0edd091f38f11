"""Dataclass configs with the papers' hyperparameters as defaults (sections.py), presets (presets.py),
`--set` parsing and validation (here).

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the
value is parsed by the leaf's declared type, so every key and value is checked on load."""

from __future__ import annotations

import dataclasses
import importlib
import ipaddress
import json
import math
import sys
import typing
from typing import Any

import numpy as np

from distrl.config.presets import (
    EVAL_PROTOCOLS,
    PAPER_SCALE_ACTORS,
    PRESETS,
    choose_preset,
    default_preset,
    describe_preset,
    learning_start_frames,
)
from distrl.config.sections import (
    A3C_ALGOS,
    ARCHITECTURES,
    RUNTIMES,
    TRACKERS,
    A3CAlgoConfig,
    A3CConfig,
    A3CNetConfig,
    A3CRayConfig,
    ActorConfig,
    ApexConfig,
    ApexDPGConfig,
    BA3CAdamConfig,
    BA3CAlgoConfig,
    BA3CConfig,
    BA3CNetConfig,
    BA3CPSConfig,
    BA3CRayConfig,
    BA3CSyncConfig,
    BA3CWorkerConfig,
    BundleConfig,
    DPGActorConfig,
    DPGLearnerConfig,
    DPGNetConfig,
    DPGReplayConfig,
    DQNActorConfig,
    DQNConfig,
    DQNInlineConfig,
    DQNLearnerConfig,
    DQNNetConfig,
    DQNReplayConfig,
    GorilaActorConfig,
    GorilaConfig,
    GorilaLearnerConfig,
    GorilaReplayConfig,
    InlineConfig,
    LearnerConfig,
    NetConfig,
    ParamServerConfig,
    ParamStoreConfig,
    RayConfig,
    ReplayConfig,
    RunConfig,
    SharedRMSPropConfig,
    accepted_text,
    out_of_range,
)
from distrl.errors import ConfigError

__all__ = ["RENAMED", "RUNTIMES", "ActorConfig", "ReplayConfig", "LearnerConfig", "NetConfig", "InlineConfig", "RayConfig",
           "RunConfig", "ApexConfig", "GorilaActorConfig", "GorilaReplayConfig", "GorilaLearnerConfig",
           "ParamServerConfig", "BundleConfig", "GorilaConfig", "A3C_ALGOS", "A3CAlgoConfig", "SharedRMSPropConfig",
           "ParamStoreConfig", "A3CNetConfig", "A3CRayConfig", "A3CConfig", "DPGActorConfig", "DPGReplayConfig",
           "DPGLearnerConfig", "DPGNetConfig", "ApexDPGConfig", "BA3CWorkerConfig", "BA3CAlgoConfig",
           "BA3CAdamConfig", "BA3CSyncConfig", "BA3CPSConfig", "BA3CNetConfig", "BA3CRayConfig", "BA3CConfig",
           "DQNActorConfig", "DQNReplayConfig", "DQNLearnerConfig", "DQNNetConfig", "DQNInlineConfig", "DQNConfig",
           "ARCHITECTURES", "EVAL_PROTOCOLS", "PRESETS", "PAPER_SCALE_ACTORS", "choose_preset", "default_preset",
           "learning_start_frames", "describe_preset", "build_config", "resolve_architecture", "LR_SAMPLES", "leaf_keys", "set_value",
           "parse_value", "validate", "to_dict", "from_dict", "dumps"]

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
    _draw_lr(cfg, overrides or {})  # a preset's own optim.lr gives way to the draw
    validate(cfg)
    return cfg


LR_SAMPLES = {"loguniform": (1e-4, 1e-2)}  # Mnih et al. 2016: each run's rate from LogUniform(1e-4, 1e-2)


def _draw_lr(cfg: Any, overrides: dict[str, Any]) -> None:
    """A3C's sampled learning rate, drawn once from the run's seed into optim.lr, so config.json (and
    --resume) keep the value drawn."""
    optim = getattr(cfg, "optim", None)
    sample = getattr(optim, "lr_sample", "")
    if not sample:
        return
    if sample not in LR_SAMPLES:
        raise ConfigError(f"invalid value {sample!r} for optim.lr_sample: accepted values are "
                          f"{', '.join(LR_SAMPLES)} (or empty for a fixed optim.lr)")
    if "optim.lr" in overrides:
        raise ConfigError("optim.lr_sample draws optim.lr: set one of them, not both")
    low, high = LR_SAMPLES[sample]
    rng = np.random.default_rng([cfg.seed, 0x1a])
    optim.lr = float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _fields(obj: Any) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(obj)}


def leaf_keys(obj: Any, prefix: str = "") -> list[str]:
    keys = []
    for name in _fields(obj):
        value = getattr(obj, name)
        keys += leaf_keys(value, f"{prefix}{name}.") if dataclasses.is_dataclass(value) else [prefix + name]
    return keys


# Old key -> its one name now. Still accepted (presets, --set, the config.json of earlier runs), with a note.
RENAMED = {"actor.max_episode_frames": "max_episode_frames", "worker.max_episode_frames": "max_episode_frames",
           "params.store": "ps.store", "params.shards": "ps.shards",
           "actor.pull_every_steps": "actor.pull_every",  # Gorila's actors: agent steps, now frames as every actor's
           "ray.samples_per_insert": "replay.samples_per_insert"}  # one replay ratio for both placements
STEPS_TO_FRAMES = {"actor.pull_every_steps"}
_noted: set[str] = set()


def set_value(cfg: Any, key: str, value: Any) -> None:
    if key in RENAMED:
        if key not in _noted:
            _noted.add(key)
            print(f"distrl: config key {key!r} is now {RENAMED[key]!r}; the old name still works", file=sys.stderr)
        if key in STEPS_TO_FRAMES:
            from distrl.envs import is_atari
            value = parse_value(key, int, value) * (4 if is_atari(cfg.env) else 1)
        key = RENAMED[key]
    if key == "inline.updates_per_round" and parse_value(key, int, value) and key not in _noted:
        _noted.add(key)
        print(f"distrl: config key {key!r} is deprecated: replay.samples_per_insert sets the learner's batches per "
              "round in one process too; the fixed count still works", file=sys.stderr)
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


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validate_ray(ray: RayConfig) -> None:
    """Ape-X's and Ape-X DPG's ray settings: both run on the same driver."""
    _check(not ray.actor_node or _is_ip(ray.actor_node), "ray.actor_node", ray.actor_node,
           "the IP address of a node of the Ray cluster, or empty")


def _check(ok: bool, key: str, value: Any, accepted: str) -> None:
    if not ok:
        raise ConfigError(f"invalid value {value!r} for {key}: accepted values are {accepted}")


def check_ranges(obj: Any, prefix: str = "") -> None:
    """Every leaf declared with `ranged` (sections.py) against its range, depth first."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            check_ranges(value, f"{prefix}{f.name}.")
        elif "range" in f.metadata and out_of_range(value, f.metadata):
            _check(False, prefix + f.name, value, accepted_text(str(f.type), f.metadata))


def validate(cfg: RunConfig) -> None:
    """The declared ranges, then what no range says: choices from other tables, layer sizes, keys
    that depend on each other."""
    c = cfg
    check_ranges(c)
    _check(c.runtime in RUNTIMES, "runtime", c.runtime, " or ".join(RUNTIMES))
    _check(c.eval_protocol in EVAL_PROTOCOLS, "eval_protocol", c.eval_protocol, ", ".join(EVAL_PROTOCOLS))
    for name in ("hidden", "actor_hidden", "critic_hidden"):
        sizes = getattr(c.net, name, (1,))
        _check(len(sizes) >= 1 and min(sizes) >= 1, f"net.{name}", sizes,
               "comma-separated layer sizes >= 1, e.g. 128,128")
    _check(c.tracking in TRACKERS, "tracking", c.tracking, "wandb, or empty for none")
    _check(not (c.video_every and not c.eval_episodes), "video_every", c.video_every,
           "0 when eval_episodes is 0 (videos are of evaluation episodes)")
    _check(not math.isnan(c.stop_return), "stop_return", c.stop_return, "a number, or inf to run to max_frames")
    _check(math.isinf(c.stop_return) or (c.eval_every and c.eval_episodes), "stop_return", c.stop_return,
           "inf unless eval_every and eval_episodes are both > 0 (the run stops on a periodic evaluation)")
    pairs = [p.partition("=") for p in c.nodes.split(",")] if c.nodes else []
    _check(all(role and sep and _is_ip(ip) for role, sep, ip in pairs), "nodes", c.nodes,
           "ROLE=IP pairs, comma-separated, e.g. learner=10.0.0.2,replay=10.0.0.2, or empty")
    if c.architecture in ("apex", "apex-dpg", "dqn", "r2d2"):
        _validate_ray(c.ray)
    if c.architecture == "apex" and c.actor.vector_env:
        from distrl.envs import is_atari
        _check(is_atari(c.env), "actor.vector_env", c.actor.vector_env,
               f"false: it steps Atari games in ale-py's vector env, and {c.env!r} is not Atari")
    if c.architecture == "r2d2":
        _check(not c.net.factory, "net.factory", c.net.factory,
               "empty: r2d2 builds its own recurrent network (a user's network is not taken yet)")
    if c.architecture == "gorila":
        from distrl.params.param_server import OPTIMIZERS
        a, p = c.actor, c.ps
        _check(0 <= a.epsilon_end <= a.epsilon_start <= 1, "actor.epsilon_start/epsilon_end",
               (a.epsilon_start, a.epsilon_end), "numbers with 0 <= epsilon_end <= epsilon_start <= 1")
        _check(p.optimizer in OPTIMIZERS, "ps.optimizer", p.optimizer, " or ".join(OPTIMIZERS))
        _check(p.staleness_bound >= -1, "ps.staleness_bound", p.staleness_bound,
               "whole numbers >= 0, or -1 for none")
    if c.architecture == "a3c":
        _check(c.algo in A3C_ALGOS, "algo", c.algo, " or ".join(A3C_ALGOS))
        _check(not (c.net.lstm and c.algo != "a3c"), "net.lstm", c.net.lstm, "false unless algo is a3c")
        _check(not (c.net.lstm and c.net.factory), "net.lstm", c.net.lstm, "false with a user's network (net.factory)")
    if c.architecture == "apex-dpg":
        _check(len(c.net.critic_hidden) == 2, "net.critic_hidden", c.net.critic_hidden,
               "two layer sizes (the action joins at the second), e.g. 400,300")


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
