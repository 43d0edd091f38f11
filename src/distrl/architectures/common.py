"""What every builder does first and last: probe the env (and a user's network), pick torch threads, derive
seeds; write and read the run's checkpoints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from distrl.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint, param_shapes, save_checkpoint
from distrl.envs import is_atari, make_env
from distrl.errors import CheckpointError, ConfigError
from distrl.factory import PREFIX, is_factory, resolve
from distrl.nets import UserPolicyValue, image_kind
from distrl.nets.dpg import UserCritic
from distrl.nets.shapes import MINATAR_FRAME


def observation_shape(space: spaces.Space[Any], env_id: str) -> tuple[int, ...]:
    if space.shape is None:
        raise ConfigError(f"{env_id}'s observation space {space} has no shape: distrl's networks take arrays "
                          "(wrap the env so its observations are a Box)")
    return tuple(space.shape)


def probe_discrete_env(cfg: Any, architecture: str) \
        -> tuple[tuple[int, ...], int, tuple[spaces.Space[Any], spaces.Space[Any]]]:
    """(observation shape, number of actions, the two spaces); a bad id or a continuous env fails here,
    before any file is written, and so does a shape none of distrl's networks takes (unless the user
    brings one)."""
    probe = make_env(cfg.env, "eval", screen_size=cfg.screen_size)
    try:
        if not isinstance(probe.action_space, spaces.Discrete):
            raise ConfigError(f"{architecture} needs a discrete action space, but {cfg.env} has "
                              f"{type(probe.action_space).__name__}: use a discrete env such as "
                              "CartPole-v1 or ALE/Pong-v5")
        shape = observation_shape(probe.observation_space, cfg.env)
        if not cfg.net.factory:
            image_kind(shape)
        return shape, int(probe.action_space.n), (probe.observation_space, probe.action_space)
    finally:
        probe.close()


@dataclass(frozen=True)
class DiscreteEnv:
    """What a builder of a discrete-action architecture learns of its env before anything starts."""

    obs_shape: tuple[int, ...]
    num_actions: int
    spaces: tuple[spaces.Space[Any], spaces.Space[Any]] | None  # kept only for a user's network (user_spaces)
    atari: bool
    frame_skip: int

    @classmethod
    def probe(cls, cfg: Any, architecture: str, kind: str = "q") -> DiscreteEnv:
        """The env's shapes, with a bad id, a continuous env or a user's network (net.factory) that breaks
        its contract (`kind`, CONTRACTS) refused here, before any file is written; the torch threads of
        this process are set for its network."""
        obs_shape, num_actions, env_spaces = probe_discrete_env(cfg, architecture)
        user_network(cfg, env_spaces, kind)
        set_torch_threads(cfg.torch_threads, obs_shape)
        return cls(obs_shape, num_actions, user_spaces(cfg, env_spaces), is_atari(cfg.env), frame_skip(cfg.env))


CONTRACTS = {
    "q": "forward(observations) -> Q-values of shape (batch, actions)",
    "policy_value": "forward(observations) -> (logits of shape (batch, actions), values of shape (batch,) or "
                    "(batch, 1))",
    "actor_critic": "(actor, critic): actor(observations) -> actions of shape (batch, action size), "
                    "critic(observations, actions) -> values of shape (batch,) or (batch, 1)",
}


def user_spaces(cfg: Any, env_spaces: tuple[spaces.Space[Any], spaces.Space[Any]]) \
        -> tuple[spaces.Space[Any], spaces.Space[Any]] | None:
    """The spaces a builder keeps for its parts: only where a user's network (net.factory) is built from them.
    Atari's observation space pickles to 114 KB, and a Ray actor's constructor arguments over 100 KB go to the
    object store, from which Ray could not restart it once they were gone (ray-project/ray#53727)."""
    return env_spaces if getattr(cfg.net, "factory", "") else None


def user_network(cfg: Any, env_spaces: tuple[spaces.Space[Any], spaces.Space[Any]] | None, kind: str) -> Any:
    """The user's network (net.factory, called with the observation and action spaces), its contract
    (CONTRACTS[kind]) checked on a batch of two sampled observations as the env gives them (uint8 frames
    are not scaled: the network scales them if it wants); None when the run uses distrl's own."""
    name = getattr(cfg.net, "factory", "")
    if not name:
        return None
    factory = resolve(name if is_factory(name) else PREFIX + name, "network")
    assert env_spaces is not None  # kept where net.factory is set (user_spaces)
    label, (obs_space, action_space) = name.removeprefix(PREFIX), env_spaces
    continuous = kind == "actor_critic"
    if isinstance(action_space, spaces.Discrete) == continuous:
        raise ConfigError(f"net.factory ({label}) for {cfg.architecture} takes {'Box' if continuous else 'Discrete'} "
                          f"actions; {cfg.env} has {type(action_space).__name__}: drop net.factory for distrl's own")
    built = factory(obs_space, action_space)
    modules = tuple(built) if continuous and isinstance(built, (tuple, list)) else (built,)
    width = int(action_space.n) if isinstance(action_space, spaces.Discrete) else int(np.prod(action_space.shape or ()))
    needs = f"{cfg.architecture} needs {CONTRACTS[kind]}, here {width} actions"
    if len(modules) != (2 if continuous else 1) or not all(isinstance(m, torch.nn.Module) for m in modules):
        raise ConfigError(f"network factory {label} returned {type(built).__name__}; {needs}, as torch.nn.Modules")
    batch = torch.as_tensor(np.stack([obs_space.sample() for _ in range(2)]))
    out = _probe(label, needs, modules[0], batch)
    shapes = _shapes(out)
    if kind == "q":
        ok = shapes == [(2, width)] and torch.is_tensor(out)
    elif kind == "policy_value":
        ok = shapes in ([(2, width), (2,)], [(2, width), (2, 1)]) and not torch.is_tensor(out)
    else:
        ok = shapes == [(2, width)] and torch.is_tensor(out)
        shapes += _shapes(_probe(label, needs, modules[1], batch, out)) if ok else []
        ok = ok and shapes[1:] in ([(2,)], [(2, 1)])
    if not ok:
        raise ConfigError(f"the network from {label} returned {shapes or type(out).__name__} for a batch of 2 "
                          f"observations; {needs}: fix its output layer")
    if kind == "q":
        return built
    return UserPolicyValue(built) if kind == "policy_value" else (modules[0], UserCritic(modules[1]))


def _probe(label: str, needs: str, module: torch.nn.Module, *inputs: torch.Tensor) -> Any:
    try:
        with torch.no_grad():
            return module(*inputs)
    except Exception as exc:
        raise ConfigError(f"the network from {label} failed on a batch of 2 observations of shape "
                          f"{tuple(inputs[0].shape)}, dtype {inputs[0].dtype} ({type(exc).__name__}: {exc}); {needs}") \
            from None


def _shapes(out: Any) -> list[tuple[int, ...]]:
    return [tuple(t.shape) for t in (out if isinstance(out, (tuple, list)) else [out]) if torch.is_tensor(t)]


def frame_skip(env_id: str) -> int:
    """Frames are emulator frames, as in the papers: 4 per agent step on Atari."""
    return 4 if is_atari(env_id) else 1


def default_torch_threads(obs_shape: tuple[int, ...]) -> int:
    """torch threads where `torch_threads` is 0: one per core (torch's default, 0 here) for Atari's CNN, one
    for small nets (MLPs, the MinAtar CNN), where more only add synchronisation: 20x slower seen here with
    MLPs, and one thread gave MinAtar learners on Ray 1.25-1.32x the updates/s of two on 2 cores beside the
    actors (docs/notes/benchmarks.md, "One torch thread for MinAtar learners on Ray")."""
    return 0 if len(obs_shape) == 3 and tuple(obs_shape[1:]) != MINATAR_FRAME else 1


def set_torch_threads(torch_threads: int, obs_shape: tuple[int, ...]) -> None:
    if threads := torch_threads or default_torch_threads(obs_shape):
        torch.set_num_threads(threads)


def spawn_seeds(seed: int, n: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


class Seeds:
    """A run's seeds by name, spawned once from its seed in a fixed layout: one per worker, then one
    per worker for each of `blocks`, then `names` in order (the layout runs were seeded with, so a
    seed gives the same run as before the seeds had names)."""

    def __init__(self, seed: int, workers: int, names: tuple[str, ...], blocks: tuple[str, ...] = ()):
        flat = spawn_seeds(seed, workers * (1 + len(blocks)) + len(names))
        self.workers = flat[:workers]
        self.blocks = {b: flat[workers * (k + 1):workers * (k + 2)] for k, b in enumerate(blocks)}
        self.named = dict(zip(names, flat[workers * (1 + len(blocks)):]))

    def __getitem__(self, name: str) -> int:
        return self.named[name]


ROLE_NAMES = {"ps": "parameter shards", "learner": "learners"}


class Checkpoints:
    """A run's checkpoints in one format (checkpoint.py): `save` of the roles' states under a step, `restore`
    of the newest with its architecture, env, network shapes and instance counts checked. `role_counts`:
    role -> (instances this run has, the --set that changes it), for roles with several; `extra`: what
    else the file's metadata says of the run (A3C's algorithm, the shards)."""

    def __init__(self, architecture: str, env: str, make_net: Callable[[], torch.nn.Module],
                 role_counts: dict[str, tuple[int, str]] | None = None, extra: dict[str, Any] | None = None):
        self.architecture, self.env, self.make_net = architecture, str(env), make_net
        self.role_counts, self.extra = role_counts or {}, extra or {}
        self.net_shapes: dict[str, list[int]] | None = None

    def meta(self) -> dict[str, Any]:
        if self.net_shapes is None:
            with torch.random.fork_rng(devices=[]):  # building a net seeds torch: a save must not move the run's RNG
                self.net_shapes = param_shapes(self.make_net().state_dict())
        return {"architecture": self.architecture, "env": self.env, "shapes": self.net_shapes, **self.extra}

    def save(self, run_dir: Path, step: int, roles: dict[str, list[Any]], counters: dict[str, float],
             returns: list[float], rng: torch.Tensor | None = None,
             replay: dict[int, dict[str, np.ndarray]] | None = None, keep: int = 3) -> Path:
        return save_checkpoint(run_dir, step, roles, self.meta(), counters=counters, returns=returns,
                               rng=rng, replay=replay, keep=keep)

    def restore(self, run_dir: Path, required: bool = True, path: Path | None = None) -> dict[str, Any] | None:
        """The newest checkpoint, or the one at `path` (roles, counters, returns, rng) with its path; None if
        there is none and it is not required. A role saved with another instance count is refused."""
        if path is None and not required and not list_checkpoints(run_dir):
            return None
        path = path or latest_checkpoint(run_dir)
        meta = self.meta()
        data = load_checkpoint(path, meta["architecture"], meta["shapes"])
        for role, (count, key) in self.role_counts.items():
            saved = len(data["roles"].get(role, []))
            if saved != count:
                raise CheckpointError(f"checkpoint {path} holds {saved} {ROLE_NAMES.get(role, role)}, this run has "
                                      f"{count}: resume with --set {key}={saved}")
        return {**data, "path": str(path)}
