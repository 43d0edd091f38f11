"""Dataclass configs with the papers' hyperparameters as defaults (sections.py), presets (presets.py),
`--set` parsing and validation (here).

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the
value is parsed by the leaf's declared type, so every key and value is checked on load."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
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
)
from distrl.errors import ConfigError

__all__ = ["RUNTIMES", "ActorConfig", "ReplayConfig", "LearnerConfig", "NetConfig", "InlineConfig", "RayConfig",
           "RunConfig", "ApexConfig", "GorilaActorConfig", "GorilaReplayConfig", "GorilaLearnerConfig",
           "ParamServerConfig", "BundleConfig", "GorilaConfig", "A3C_ALGOS", "A3CAlgoConfig", "SharedRMSPropConfig",
           "ParamStoreConfig", "A3CNetConfig", "A3CRayConfig", "A3CConfig", "DPGActorConfig", "DPGReplayConfig",
           "DPGLearnerConfig", "DPGNetConfig", "ApexDPGConfig", "BA3CWorkerConfig", "BA3CAlgoConfig",
           "BA3CAdamConfig", "BA3CSyncConfig", "BA3CPSConfig", "BA3CNetConfig", "BA3CRayConfig", "BA3CConfig",
           "ARCHITECTURES", "EVAL_PROTOCOLS", "PRESETS", "PAPER_SCALE_ACTORS", "choose_preset", "default_preset",
           "learning_start_frames", "describe_preset", "build_config", "LR_SAMPLES", "leaf_keys", "set_value",
           "parse_value", "validate", "to_dict", "from_dict", "dumps"]

# ---------------------------------------------------------------- building and validation

def build_config(architecture: str, env: str, preset: str | None = None,
                 overrides: dict[str, Any] | None = None) -> Any:
    """Defaults, then the preset, then explicit overrides (already typed or strings), then checks."""
    if architecture not in ARCHITECTURES:
        raise ConfigError(f"unknown architecture {architecture!r}: choose one of {', '.join(ARCHITECTURES)}")
    cfg = ARCHITECTURES[architecture]()
    cfg.env = env
    overrides = overrides or {}
    actors = int(overrides["actors"]) if "actors" in overrides else None
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
            return str(value)
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
    _check(ray.steps_per_call >= 1, "ray.steps_per_call", ray.steps_per_call, "whole numbers >= 1")
    _check(ray.max_inflight_adds >= 1, "ray.max_inflight_adds", ray.max_inflight_adds, "whole numbers >= 1")
    _check(not ray.actor_node or _is_ip(ray.actor_node), "ray.actor_node", ray.actor_node,
           "the IP address of a node of the Ray cluster, or empty")
    _check(ray.publish_every >= 1, "ray.publish_every", ray.publish_every, "whole numbers >= 1")
    _check(ray.samples_per_insert >= 0, "ray.samples_per_insert", ray.samples_per_insert,
           "numbers >= 0 (0: actors never wait for the learner)")


def _check(ok: bool, key: str, value: Any, accepted: str) -> None:
    if not ok:
        raise ConfigError(f"invalid value {value!r} for {key}: accepted values are {accepted}")


def validate(cfg: RunConfig) -> None:
    """The checks every run shares, then the architecture's own."""
    c = cfg
    _check(c.runtime in RUNTIMES, "runtime", c.runtime, " or ".join(RUNTIMES))
    _check(c.actors >= 1, "actors", c.actors, "whole numbers >= 1")
    _check(c.max_frames >= 1, "max_frames", c.max_frames, "whole numbers >= 1")
    _check(c.seed >= 0, "seed", c.seed, "whole numbers >= 0")
    _check(c.log_every_s > 0, "log_every_s", c.log_every_s, "numbers > 0")
    _check(c.checkpoint_every >= 1, "checkpoint_every", c.checkpoint_every, "whole numbers >= 1")
    _check(c.eval_episodes >= 0, "eval_episodes", c.eval_episodes, "whole numbers >= 0")
    _check(0 <= c.eval_epsilon <= 1, "eval_epsilon", c.eval_epsilon, "numbers in [0, 1]")
    _check(c.eval_protocol in EVAL_PROTOCOLS, "eval_protocol", c.eval_protocol, ", ".join(EVAL_PROTOCOLS))
    _check(c.eval_max_frames >= 4, "eval_max_frames", c.eval_max_frames, "whole numbers >= 4 (emulator frames)")
    _check(c.eval_every >= 0, "eval_every", c.eval_every, "whole numbers >= 0 (0: only at the end)")
    _check(c.torch_threads >= 0, "torch_threads", c.torch_threads, "whole numbers >= 0 (0: automatic)")
    for name in ("hidden", "actor_hidden", "critic_hidden"):
        sizes = getattr(c.net, name, (1,))
        _check(len(sizes) >= 1 and min(sizes) >= 1, f"net.{name}", sizes,
               "comma-separated layer sizes >= 1, e.g. 128,128")
    {"apex": _validate_apex, "gorila": _validate_gorila, "a3c": _validate_a3c,
     "ba3c": _validate_ba3c, "apex-dpg": _validate_apex_dpg}[c.architecture](c)


def _validate_dqn_learner(le: Any) -> None:
    _check(le.batch_size >= 1, "learner.batch_size", le.batch_size, "whole numbers >= 1")
    _check(le.n_step >= 1, "learner.n_step", le.n_step, "whole numbers >= 1")
    _check(0 <= le.gamma <= 1, "learner.gamma", le.gamma, "numbers in [0, 1]")
    _check(le.loss in ("mse", "huber"), "learner.loss", le.loss, "mse or huber")
    _check(le.grad_clip > 0, "learner.grad_clip", le.grad_clip, "numbers > 0")
    _check(le.target_update >= 1, "learner.target_update", le.target_update, "whole numbers >= 1")


def _validate_apex(c: ApexConfig) -> None:
    a = c.actor
    _check(a.envs_per_actor >= 1, "actor.envs_per_actor", a.envs_per_actor, "whole numbers >= 1")
    _check(0 <= a.epsilon_base <= 1, "actor.epsilon_base", a.epsilon_base, "numbers in [0, 1]")
    _check(a.epsilon_alpha >= 0, "actor.epsilon_alpha", a.epsilon_alpha, "numbers >= 0")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.pull_every >= 1, "actor.pull_every", a.pull_every, "whole numbers >= 1")
    _check(a.max_episode_frames >= 1, "actor.max_episode_frames", a.max_episode_frames, "whole numbers >= 1")
    r = c.replay
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.alpha >= 0, "replay.alpha", r.alpha, "numbers >= 0")
    _check(0 <= r.beta <= 1, "replay.beta", r.beta, "numbers in [0, 1]")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    _check(r.trim_every >= 1, "replay.trim_every", r.trim_every, "whole numbers >= 1")
    _check(r.shards >= 1, "replay.shards", r.shards, "whole numbers >= 1")
    _validate_ray(c.ray)
    le = c.learner
    _validate_dqn_learner(le)
    _check(le.optimizer in ("rmsprop_centered", "adam"), "learner.optimizer", le.optimizer,
           "rmsprop_centered or adam")
    _check(le.lr > 0, "learner.lr", le.lr, "numbers > 0")
    _check(0 <= le.rms_decay < 1, "learner.rms_decay", le.rms_decay, "numbers in [0, 1)")
    _check(le.rms_eps > 0, "learner.rms_eps", le.rms_eps, "numbers > 0")
    _check(le.prefetch >= 0, "learner.prefetch", le.prefetch, "whole numbers >= 0")
    _check(c.inline.actor_steps >= 1, "inline.actor_steps", c.inline.actor_steps, "whole numbers >= 1")
    _check(c.inline.updates_per_round >= 1, "inline.updates_per_round", c.inline.updates_per_round,
           "whole numbers >= 1")


def _validate_gorila(c: GorilaConfig) -> None:
    from distrl.params.param_server import OPTIMIZERS
    a = c.actor
    _check(0 <= a.epsilon_end <= a.epsilon_start <= 1, "actor.epsilon_start/epsilon_end",
           (a.epsilon_start, a.epsilon_end), "numbers with 0 <= epsilon_end <= epsilon_start <= 1")
    _check(a.epsilon_updates >= 1, "actor.epsilon_updates", a.epsilon_updates, "whole numbers >= 1")
    _check(a.pull_every_steps >= 1, "actor.pull_every_steps", a.pull_every_steps, "whole numbers >= 1")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.max_episode_frames >= 1, "actor.max_episode_frames", a.max_episode_frames, "whole numbers >= 1")
    r = c.replay
    _check(r.mode in ("local", "global"), "replay.mode", r.mode, "local (one table per bundle) or global")
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    le = c.learner
    _validate_dqn_learner(le)
    _check(le.pull_every_steps >= 1, "learner.pull_every_steps", le.pull_every_steps, "whole numbers >= 1")
    _check(le.outlier_k > 0, "learner.outlier_k", le.outlier_k, "numbers > 0")
    _check(le.outlier_warmup >= 2, "learner.outlier_warmup", le.outlier_warmup, "whole numbers >= 2")
    p = c.ps
    _check(p.shards >= 1, "ps.shards", p.shards, "whole numbers >= 1")
    _check(p.optimizer in OPTIMIZERS, "ps.optimizer", p.optimizer, " or ".join(OPTIMIZERS))
    _check(p.lr > 0, "ps.lr", p.lr, "numbers > 0")
    _check(p.staleness_bound >= -1, "ps.staleness_bound", p.staleness_bound, "whole numbers >= 0, or -1 for none")
    b = c.bundle
    _check(b.actor_steps >= 1, "bundle.actor_steps", b.actor_steps, "whole numbers >= 1")
    _check(b.updates >= 0, "bundle.updates", b.updates, "whole numbers >= 0")
    _check(b.rounds_per_call >= 1, "bundle.rounds_per_call", b.rounds_per_call, "whole numbers >= 1")


def _validate_a3c(c: A3CConfig) -> None:
    _check(c.algo in A3C_ALGOS, "algo", c.algo, " or ".join(A3C_ALGOS))
    _check(c.max_episode_frames >= 1, "max_episode_frames", c.max_episode_frames, "whole numbers >= 1")
    r = c.rl
    _check(r.t_max >= 1, "rl.t_max", r.t_max, "whole numbers >= 1")
    _check(0 <= r.gamma <= 1, "rl.gamma", r.gamma, "numbers in [0, 1]")
    _check(r.entropy_beta >= 0, "rl.entropy_beta", r.entropy_beta, "numbers >= 0")
    _check(r.value_coef >= 0, "rl.value_coef", r.value_coef, "numbers >= 0")
    _check(r.reward_scale > 0, "rl.reward_scale", r.reward_scale, "numbers > 0")
    _check(r.grad_clip > 0, "rl.grad_clip", r.grad_clip, "numbers > 0")
    _check(r.target_update >= 1, "rl.target_update", r.target_update, "whole numbers >= 1")
    _check(r.epsilon_anneal_frames >= 1, "rl.epsilon_anneal_frames", r.epsilon_anneal_frames, "whole numbers >= 1")
    o = c.optim
    _check(o.lr > 0, "optim.lr", o.lr, "numbers > 0")
    _check(0 <= o.decay < 1, "optim.decay", o.decay, "numbers in [0, 1)")
    _check(o.eps > 0, "optim.eps", o.eps, "numbers > 0")
    _check(c.params.store in ("shared", "sharded"), "params.store", c.params.store,
           "shared (one host, shared memory) or sharded (the parameter server)")
    _check(c.params.shards >= 1, "params.shards", c.params.shards, "whole numbers >= 1")
    _check(not (c.net.lstm and c.algo != "a3c"), "net.lstm", c.net.lstm, "false unless algo is a3c")
    _check(c.ray.steps_per_call >= 1, "ray.steps_per_call", c.ray.steps_per_call, "whole numbers >= 1")


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a config saved as config.json (for --resume), checking every key again."""
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


def _validate_ba3c(c: BA3CConfig) -> None:
    w = c.worker
    _check(w.n_sim >= 1, "worker.n_sim", w.n_sim, "whole numbers >= 1")
    _check(w.t_max >= 1, "worker.t_max", w.t_max, "whole numbers >= 1")
    _check(w.batch_size >= 1, "worker.batch_size", w.batch_size, "whole numbers >= 1")
    _check(w.max_episode_frames >= 1, "worker.max_episode_frames", w.max_episode_frames, "whole numbers >= 1")
    r = c.rl
    _check(0 <= r.gamma <= 1, "rl.gamma", r.gamma, "numbers in [0, 1]")
    _check(r.entropy_beta >= 0, "rl.entropy_beta", r.entropy_beta, "numbers >= 0")
    _check(r.value_coef >= 0, "rl.value_coef", r.value_coef, "numbers >= 0")
    _check(r.grad_clip > 0, "rl.grad_clip", r.grad_clip, "numbers > 0")
    _check(r.reward_scale > 0, "rl.reward_scale", r.reward_scale, "numbers > 0")
    o = c.optim
    _check(o.lr > 0, "optim.lr", o.lr, "numbers > 0")
    _check(o.eps > 0, "optim.eps", o.eps, "numbers > 0")
    _check(0 <= o.beta1 < 1, "optim.beta1", o.beta1, "numbers in [0, 1)")
    _check(0 <= o.beta2 < 1, "optim.beta2", o.beta2, "numbers in [0, 1)")
    _check(c.sync.mode in ("sync", "async"), "sync.mode", c.sync.mode, "sync or async")
    _check(0 < c.sync.fraction <= 1, "sync.fraction", c.sync.fraction, "numbers in (0, 1]")
    _check(c.ps.shards >= 1, "ps.shards", c.ps.shards, "whole numbers >= 1")
    _check(c.ray.rounds_per_call >= 1, "ray.rounds_per_call", c.ray.rounds_per_call, "whole numbers >= 1")


def _validate_apex_dpg(c: ApexDPGConfig) -> None:
    a = c.actor
    _check(a.envs_per_actor >= 1, "actor.envs_per_actor", a.envs_per_actor, "whole numbers >= 1")
    _check(a.sigma >= 0, "actor.sigma", a.sigma, "numbers >= 0")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.pull_every >= 1, "actor.pull_every", a.pull_every, "whole numbers >= 1")
    r = c.replay
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.alpha >= 0, "replay.alpha", r.alpha, "numbers >= 0")
    _check(0 <= r.beta <= 1, "replay.beta", r.beta, "numbers in [0, 1]")
    _check(r.alpha_evict <= 0, "replay.alpha_evict", r.alpha_evict, "numbers <= 0 (low priorities leave first)")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    _check(r.trim_every >= 1, "replay.trim_every", r.trim_every, "whole numbers >= 1")
    _check(r.shards >= 1, "replay.shards", r.shards, "whole numbers >= 1")
    le = c.learner
    _check(le.batch_size >= 1, "learner.batch_size", le.batch_size, "whole numbers >= 1")
    _check(le.n_step >= 1, "learner.n_step", le.n_step, "whole numbers >= 1")
    _check(0 <= le.gamma <= 1, "learner.gamma", le.gamma, "numbers in [0, 1]")
    _check(le.lr > 0, "learner.lr", le.lr, "numbers > 0")
    _check(le.actor_grad_clip > 0, "learner.actor_grad_clip", le.actor_grad_clip, "numbers > 0")
    _check(le.target_update >= 1, "learner.target_update", le.target_update, "whole numbers >= 1")
    _validate_ray(c.ray)
    _check(len(c.net.critic_hidden) == 2, "net.critic_hidden", c.net.critic_hidden,
           "two layer sizes (the action joins at the second), e.g. 400,300")
