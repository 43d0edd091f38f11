"""Distributed BA3C (Adamski et al. 2018) as a builder: n workers, each acting in n_sim envs with
one batched forward pass and computing the A3C gradient on batches of bs data points; a chief
averages a round's gradients once a fraction of the workers have pushed (`sync.mode=sync`), and
the parameters live in `ps.shards` parameter-server shards running Adam with the paper's betas.
`sync.mode=async` sends every gradient straight to the shards instead, for the paper's comparison.

Its roles: the workers (called: `run(gradients)`), the parameter shards and, in sync mode, the chief
(served), and the evaluator. The rounds applied (the furthest shard's version) are the run's
progress. This module says what to create and how the parts connect; a placement says where.

Faults (roles in their own processes, restarted when they die): a restarted shard loads its slice of
the newest checkpoint; a restarted chief opens the round the shards are at; a restarted worker pulls
and goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from distrl.architectures.ba3c.config import BA3CConfig
from distrl.architectures.base import Hooks, Role, Topology, Work, evaluator_role
from distrl.architectures.common import Checkpoints, DiscreteEnv, Seeds, user_network
from distrl.architectures.sharded import ShardSpec, flat_params, shards_policy, shards_policy_params
from distrl.components.batched_worker import BatchedWorker
from distrl.components.chief import Chief, WaitingChief
from distrl.components.evaluator import Evaluator
from distrl.components.workers import GradientWorker, ShardWorker
from distrl.envs import make_env
from distrl.nets import PolicyValueNet
from distrl.params.param_server import ParamShard, ShardedParameterServer, flatten, shard_counters
from distrl.params.sync_chief import SyncChief, workers_needed


class BA3C(Hooks):
    """Its config is BA3CConfig; its hooks are the driver's view of the workers, the chief and the shards. A
    worker and the chief are built from this builder itself, through their Protocols (contracts.GradientParts,
    ChiefParts)."""

    def __init__(self, cfg: BA3CConfig):
        self.cfg, self.env = cfg, DiscreteEnv.probe(cfg, cfg.architecture, "policy_value")
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "net"))
        self.n_params = int(flatten(self.make_net()).size)
        self.delays = [0.0] * cfg.actors  # seconds each worker adds to every gradient (tests of stragglers)
        self._waits: list[float] = []  # how long each round stayed open, since the last metrics row

    def topology(self) -> Topology:
        """In one process the workers push in turn, each on the newest parameters, so none is late there;
        where they run apart, a sync push waits for its round (the chief's `apart` class), and one
        computed on a closed round is late. The rounds applied (the furthest shard's version) are the run's
        progress, and the shards' states its checkpoint."""
        cfg = self.cfg
        sync = cfg.sync.mode == "sync"
        # Two threads: pid() and quick calls answer while run() waits for its round to close
        roles = (Role("workers", cfg.actors, GradientWorker, ("ps", "chief"), Work("rounds", 1), threads=2,
                      torch_threads=cfg.torch_threads or 1, parts=self),
                 Role("ps", cfg.ps.shards, ShardWorker, fault="ps_restarts", parts=self.shards()),
                 Role("chief", int(sync), Chief, ("ps",), threads=max(16, 2 * cfg.actors), apart=WaitingChief,
                      fault="chief_restarts", parts=self),
                 evaluator_role(cfg, self.make_evaluator))
        checkpoints = Checkpoints(cfg.architecture, cfg.env, self.make_net, {"ps": (cfg.ps.shards, "ps.shards")},
                                  {"ps_shards": cfg.ps.shards})
        return Topology(roles, checkpoints, saved_role="ps", stats_roles=("ps", "chief"),
                        fault_gauges=("dropped_late",), hooks=self)

    def counters(self, totals: dict[str, float], served: dict[str, list[dict[str, Any]]],
                 reported: dict[str, dict[int, dict[str, float]]]) -> dict[str, float]:
        """learner/updates: rounds applied, the furthest shard's version (a restored shard lags)."""
        rounds = shard_counters(served["ps"])["max_version"] if served.get("ps") else 0
        for chief in served.pop("chief", []):  # a chief's waits are drained by each stats(): take them once
            self._waits += chief["waits"]
        return {"actors/frames": totals.get("workers/frames", 0), "actors/episodes": totals.get("workers/episodes", 0),
                "learner/pushes": totals.get("workers/gradients", 0),
                "learner/data_points": totals.get("workers/data_points", 0), "learner/updates": rounds,
                "workers/dropped_late": totals.get("workers/dropped_late", 0),
                "workers/ps_waits": sum(s.get("ps_waits", 0) for s in reported.get("workers", {}).values())}

    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        waits, self._waits = self._waits, []
        return {**round_gauges(waits, counters.get("workers/dropped_late", 0)),
                "ps_waits": counters.get("workers/ps_waits", 0)}

    def release_waiters(self, roles: dict[str, list[Any]], transport: Any) -> None:
        """Workers still waiting in the chief for a round stop waiting (no more pushes come)."""
        for chief in roles.get("chief", []):
            try:
                transport.gather([transport.call(chief, "release")], timeout=30)
            except transport.dead:
                pass  # restarting: nothing waits in a new one

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])  # every copy starts from the same initial parameters
        if (net := user_network(self.cfg, self.env.spaces, "policy_value")) is not None:
            return cast(torch.nn.Module, net)
        return PolicyValueNet(self.env.obs_shape, self.env.num_actions, self.cfg.net.hidden, cnn="ba3c")

    # ---- parameter server ------------------------------------------------------------------
    def shards(self) -> ShardSpec:
        """Adam on every shard with the paper's values; no staleness bound: in sync mode the chief
        already drops late gradients, and async mode applies every push, as the paper compares."""
        cfg, o = self.cfg, self.cfg.learner
        options: dict[str, Any] = {"optimizer": "adam", "lr": o.lr, "eps": o.eps, "betas": (o.beta1, o.beta2)}
        if o.anneal:  # a shard's version counts rounds (sync) or pushes (async); a push is bs agent steps
            pushes = workers_needed(cfg.actors, cfg.sync.fraction) if cfg.sync.mode == "sync" else 1
            frames = cfg.worker.batch_size * self.env.frame_skip * pushes
            options["anneal_updates"] = max(1, round(cfg.max_frames / frames))
        return ShardSpec(self.make_net, self.n_params, cfg.ps.shards, options)

    def shard_client(self, shards: list[Any], transport: Any) -> ShardedParameterServer:
        return self.shards().client(shards, transport)

    def policy(self, roles: dict[str, list[Any]], transport: Any) -> tuple[Any, int]:
        return shards_policy(self.shards(), roles, transport)

    def make_shard(self, index: int) -> ParamShard:
        return self.shards().make_shard(index)

    def shard_sizes(self) -> list[int]:
        return self.shards().sizes()

    def make_chief(self, round: int = 0) -> SyncChief:
        return SyncChief(self.cfg.actors, self.cfg.sync.fraction, round=round)

    # ---- workers ---------------------------------------------------------------------------
    def make_gradient_worker(self, index: int) -> BatchedWorker:
        cfg, w, seed = self.cfg, self.cfg.worker, self.seeds.workers[index] % 2**31
        cap = cfg.max_episode_frames if self.env.atari else None
        return BatchedWorker(
            lambda i: make_env(cfg.env, "train", seed=seed + i, max_episode_frames=cap, screen_size=cfg.screen_size),
            w.n_sim, self.make_net(),
            t_max=w.t_max, batch_size=w.batch_size, gamma=cfg.rl.gamma, entropy_beta=cfg.rl.entropy_beta,
            value_coef=cfg.rl.value_coef, grad_clip=cfg.rl.grad_clip, reward_scale=cfg.rl.reward_scale,
            frame_skip=self.env.frame_skip, seed=seed)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        """Greedy episodes (the paper's evaluation scores take the most probable action)."""
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes, policy="softmax")

    def params(self, flat: np.ndarray) -> dict[str, torch.Tensor]:
        return flat_params(self.make_net, flat)

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return shards_policy_params(self, run_dir, checkpoint)


def round_gauges(waits: list[float], dropped_late: float) -> dict[str, float]:
    """Mean and max seconds a round stayed open (since the last row), and late gradients dropped so far."""
    return {"round_wait_mean_s": float(np.mean(waits)) if waits else 0.0,
            "round_wait_max_s": float(np.max(waits)) if waits else 0.0, "dropped_late": float(dropped_late)}
