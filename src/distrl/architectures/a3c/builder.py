"""The A3C family (Mnih et al. 2016) as a builder: N actor-learners, each with its own env and no
replay, pushing gradients to one parameter store: SharedMemoryParams (one host, shared RMSProp,
Hogwild) or the sharded parameter server (`ps.store=sharded`, RMSProp on every shard).

Its roles: the workers (called: `run(steps, global_frames)`), the parameter shards with
ps.store=sharded (served), and the evaluator. The shared-memory store is no role: the run's driver
process owns it for the run's length (`held_by_driver`), and every worker attaches it by name, so workers
must share the driver's host. This module says what to create and how the parts connect; a
placement says where.

Faults (roles in their own processes, restarted when they die): a restarted worker re-attaches and
goes on (its unfinished rollout is lost); a restarted shard loads its slice of the newest checkpoint,
and workers that called it meanwhile wait (ps_waits)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from gymnasium import spaces

from distrl.algos.q_learning import exploration_epsilons
from distrl.architectures.a3c.config import A3CConfig
from distrl.architectures.base import Hooks, Role, Topology, Work, evaluator_role
from distrl.architectures.common import (
    Checkpoints,
    Seeds,
    frame_skip,
    observation_shape,
    set_torch_threads,
    user_network,
    user_spaces,
)
from distrl.architectures.sharded import ShardSpec, flat_params, shards_policy, shards_policy_params
from distrl.components.actor_learner import ActorLearner
from distrl.components.evaluator import Evaluator
from distrl.components.workers import ActorLearnerWorker, ShardWorker
from distrl.envs import is_atari, make_env
from distrl.errors import ConfigError
from distrl.nets import A3CCNN, QNetwork, image_kind, make_policy_value_net, make_q_network
from distrl.params.param_server import ParamShard, ShardedParameterServer, flatten, shard_counters

if TYPE_CHECKING:  # imported where the store is made: only A3C's shared store needs it
    from distrl.params.shared_memory import SharedMemoryParams


class A3C(Hooks):
    """Its config is A3CConfig; its hooks are the driver's view of the workers and the store, which the
    driver's process holds with ps.store=shared. A worker is built from this builder itself, through its
    Protocol (contracts.ActorLearnerParts)."""

    def __init__(self, cfg: A3CConfig):
        self.cfg = cfg
        probe = make_env(cfg.env, "eval", screen_size=cfg.screen_size)
        try:
            self.obs_shape = observation_shape(probe.observation_space, cfg.env)
            self.action_space = probe.action_space
            self.spaces = user_spaces(cfg, (probe.observation_space, probe.action_space))
        finally:
            probe.close()
        self.continuous = isinstance(self.action_space, spaces.Box)
        if not isinstance(self.action_space, (spaces.Box, spaces.Discrete)):
            raise ConfigError(f"a3c needs a Discrete or Box action space, {cfg.env} has "
                              f"{type(self.action_space).__name__}")
        if self.continuous and cfg.algo != "a3c":
            raise ConfigError(f"algo={cfg.algo} needs discrete actions, but {cfg.env} has continuous ones: "
                              "use --set algo=a3c (Gaussian policy) or a discrete env such as CartPole-v1")
        if self.continuous and cfg.net.lstm:
            raise ConfigError("net.lstm=true is for discrete actions only: drop it for a continuous env")
        self.atari = is_atari(cfg.env)
        if cfg.net.activation != "relu" and (image_kind(self.obs_shape) != "atari" or cfg.net.factory):
            raise ConfigError(f"net.activation={cfg.net.activation} sets the units of A3C's Atari network only, and "
                              f"{cfg.env} gets " + ("the user's network" if cfg.net.factory else "another one") +
                              ": drop net.activation")
        self.frame_skip = frame_skip(cfg.env)
        set_torch_threads(cfg.torch_threads, self.obs_shape)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "epsilons", "net"))
        self.n_params = int(flatten(self.make_net()).size)
        rng = np.random.default_rng(self.seeds["epsilons"])
        self.final_epsilons = exploration_epsilons(cfg.actors, rng)
        self.owner: Any = None  # the shared-memory store, in the driver's process while the run goes
        self.store_spec: dict[str, Any] | None = None  # ... and what workers attach it by

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "owner": None}  # a worker elsewhere attaches by store_spec

    def topology(self) -> Topology:
        """In one process a round is one rollout of each worker in turn (the paper's threads, serialised).
        The store's version is the run's progress, and its state (the shards', or the shared store's) the
        checkpoint."""
        cfg = self.cfg
        roles = (Role("workers", cfg.actors, ActorLearnerWorker, ("ps",), Work("steps", 1),
                      torch_threads=cfg.torch_threads or 1, parts=self),
                 Role("ps", cfg.ps.shards if cfg.ps.store == "sharded" else 0, ShardWorker, fault="ps_restarts",
                      parts=self.shards()),
                 evaluator_role(cfg, self.make_evaluator))
        counts = {"ps": (1, "ps.store=sharded --set ps.shards")} if cfg.ps.store == "shared" else \
            {"ps": (cfg.ps.shards, "ps.shards")}
        checkpoints = Checkpoints(cfg.architecture, cfg.env, self.make_net, counts,
                                  {"algo": cfg.algo, "store": cfg.ps.store})
        return Topology(roles, checkpoints, saved_role="ps", stats_roles=("ps",), fault_gauges=("ps_waits",),
                        hooks=self)

    def call_args(self, role: str, frames: float) -> tuple[Any, ...]:
        """A worker's epsilon and target refresh follow the run's frames, as last counted."""
        return (int(frames),)

    @contextmanager
    def held_by_driver(self) -> Iterator[None]:
        """With ps.store=shared: the store, for as long as the run goes (the driver hands it the run's newest
        checkpoint, as it would a shard); then its memory is freed."""
        if self.cfg.ps.store != "shared":
            yield
            return
        self.owner = self.create_shared_store()
        try:
            self.store_spec = self.owner.spec()
            yield
        finally:
            self.owner.close()
            self.owner.unlink()
            self.owner = self.store_spec = None

    def parts_held_by_driver(self) -> dict[str, list[Any]]:
        return {"ps": [self.owner]} if self.owner is not None else {}

    def store_client(self, shards: list[Any], transport: Any) -> Any:
        """A worker's store: its own attachment of the shared one, or a client of the shards."""
        if self.store_spec is not None:
            from distrl.params.shared_memory import SharedMemoryParams
            return SharedMemoryParams.attach(self.store_spec)
        return self.shards().client(shards, transport)

    def counters(self, totals: dict[str, float], served: dict[str, list[dict[str, Any]]],
                 reported: dict[str, dict[int, dict[str, float]]]) -> dict[str, float]:
        """learner/updates is the store's version (global updates); learner/pushes the workers' pushes."""
        store = self.owner.counters() if self.owner is not None else \
            shard_counters(served["ps"]) if served.get("ps") else {"version": 0}
        return {"actors/frames": totals.get("workers/frames", 0), "actors/episodes": totals.get("workers/episodes", 0),
                "learner/pushes": totals.get("workers/updates", 0), "learner/updates": store["version"],
                "workers/ps_waits": sum(s.get("ps_waits", 0) for s in reported.get("workers", {}).values())}

    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        return {"ps_waits": counters.get("workers/ps_waits", 0)}

    def policy(self, roles: dict[str, list[Any]], transport: Any) -> tuple[Any, int]:
        if self.owner is None:
            return shards_policy(self.shards(), roles, transport)
        flat, versions = self.owner.pull()
        return {k: v.numpy() for k, v in self.params(flat).items()}, int(versions.min())

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])  # every copy starts from the same initial parameters
        cfg = self.cfg
        if (net := user_network(cfg, self.spaces, "policy_value" if cfg.algo == "a3c" else "q")) is not None:
            return cast(torch.nn.Module, net)
        if cfg.algo == "a3c":
            return make_policy_value_net(self.obs_shape, self.action_space, cfg.net.hidden, lstm=cfg.net.lstm,
                                         activation=cfg.net.activation)
        if image_kind(self.obs_shape) == "atari":  # the paper's Q methods use A3C's network, not DQN's
            torso = A3CCNN(self.obs_shape[0], activation=cfg.net.activation, frame=self.obs_shape[1:])
            return QNetwork(torso, torch.nn.Linear(torso.out_features, self.num_actions()))
        return make_q_network(self.obs_shape, self.num_actions(), dueling=False, hidden=cfg.net.hidden)

    def num_actions(self) -> int:
        assert isinstance(self.action_space, spaces.Discrete)  # the Q methods: a Box env is refused above
        return int(self.action_space.n)

    def initial_params(self) -> np.ndarray:
        return flatten(self.make_net())

    # ---- parameter stores ------------------------------------------------------------------
    def create_shared_store(self) -> SharedMemoryParams:
        """The owner's SharedMemoryParams (the runtime unlinks it at the end)."""
        from distrl.params.shared_memory import SharedMemoryParams
        o = self.cfg.learner
        return SharedMemoryParams.create(self.initial_params(), lr=o.lr, decay=o.decay, eps=o.eps,
                                         shared_stats=o.shared_stats, anneal_updates=self.anneal_updates())

    def anneal_updates(self) -> int | None:
        """Pushes over which the rate falls to 0: global frames / max_frames, a push counting one rollout
        of t_max agent steps (shorter rollouts at episode ends make it end a little early)."""
        if not self.cfg.learner.anneal:
            return None
        return max(1, round(self.cfg.max_frames / (self.cfg.rl.t_max * self.frame_skip)))

    def shards(self) -> ShardSpec:
        """The sharded store: the paper's RMSProp (eps inside the square root) on every shard, as the shared store."""
        o = self.cfg.learner
        return ShardSpec(self.make_net, self.n_params, self.cfg.ps.shards,
                         {"optimizer": "rmsprop", "lr": o.lr, "decay": o.decay, "eps": o.eps,
                          "anneal_updates": self.anneal_updates()})

    def shard_client(self, shards: list[Any], transport: Any) -> ShardedParameterServer:
        return self.shards().client(shards, transport)

    def make_shard(self, index: int) -> ParamShard:
        return self.shards().make_shard(index)

    def shard_sizes(self) -> list[int]:
        return self.shards().sizes()

    # ---- workers ---------------------------------------------------------------------------
    def make_actor_learner(self, index: int, store: Any) -> ActorLearner:
        cfg, seed = self.cfg, self.seeds.workers[index]
        cap = cfg.max_episode_frames if self.atari else None
        q_method = cfg.algo != "a3c"
        return ActorLearner(
            lambda: make_env(cfg.env, "train", seed=seed, max_episode_frames=cap, screen_size=cfg.screen_size),
            self.make_net(), store,
            algo=cfg.algo, t_max=cfg.rl.t_max, gamma=cfg.rl.gamma, entropy_beta=cfg.rl.entropy_beta,
            value_coef=cfg.rl.value_coef, grad_clip=cfg.rl.grad_clip, reward_scale=cfg.rl.reward_scale,
            reduction=cfg.rl.reduction,
            target=self.make_net().requires_grad_(False) if q_method else None,
            target_update=cfg.rl.target_update, final_epsilon=float(self.final_epsilons[index]),
            epsilon_anneal_frames=cfg.rl.epsilon_anneal_frames, frame_skip=self.frame_skip, seed=seed % 2**31)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        policy = "q" if self.cfg.algo != "a3c" else ("gaussian" if self.continuous else "softmax")
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes,
                                 epsilon=0.0 if self.continuous else None, policy=policy)

    def params(self, flat: np.ndarray) -> dict[str, torch.Tensor]:
        return flat_params(self.make_net, flat)

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return shards_policy_params(self, run_dir, checkpoint)
