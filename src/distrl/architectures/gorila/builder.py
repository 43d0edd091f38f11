"""Gorila DQN (Nair et al. 2015) as a builder: N bundles, each an epsilon-greedy actor, a uniform
replay (its own, or one shared table with `replay.mode=global`) and a learner that pushes DQN
gradients to a sharded parameter server; the server applies them with AdaGrad, dropping stale
ones, and is every actor's and learner's parameter source.

Its roles: the bundles (called: `run(rounds)`), the parameter shards and, with replay.mode=global, the
shared table (served), and the evaluator. The server's version (the minimum over shards) is the
run's progress. This module says what to create and how the parts connect; a placement says where.

Faults (roles in their own processes, restarted when they die): a dead bundle loses its local replay
and unsent transitions; the others go on. A restarted shard loads its slice of the newest checkpoint
(values, optimizer state, version); bundles that called it meanwhile wait (ps_waits) and skip that round."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch

from distrl.architectures.base import Hooks, Role, Topology, Work, evaluator_role
from distrl.architectures.common import Checkpoints, DiscreteEnv, Seeds, user_network
from distrl.architectures.gorila.config import BundleConfig, GorilaConfig
from distrl.architectures.sharded import ShardSpec, flat_params, shards_policy, shards_policy_params
from distrl.components.actor import Actor, ParameterSource, Sink
from distrl.components.evaluator import Evaluator
from distrl.components.learner import DQNLearner, LossOutlierFilter, ParamServerLearner
from distrl.components.workers import BundleWorker, ReplayShard, ShardWorker
from distrl.envs import make_env
from distrl.nets import make_q_network
from distrl.params.param_server import ParamServerSource, ParamShard, ShardedParameterServer, shard_counters
from distrl.replay import FifoRemover, MinSize, RateLimiter, ReplayTable, UniformSampler
from distrl.replay.sharded import ShardedReplay
from distrl.replay.table import frame_fields


class Bundle:
    """One Gorila bundle: its actor and its learner take turns, `actor_steps` env steps then
    `updates` learner steps (once the replay's limiter lets it sample), so the replay ratio is fixed by the
    config rather than by which process happens to run faster."""

    def __init__(self, actor: Actor, replay: Any, learner: ParamServerLearner, cfg: BundleConfig,
                 batch_size: int):
        self.actor, self.replay, self.learner = actor, replay, learner
        self.cfg, self.batch_size = cfg, batch_size

    def run_round(self) -> None:
        self.actor.run(self.cfg.actor_steps)
        if self.cfg.updates and self.replay.can_sample(self.batch_size):
            for _ in range(self.cfg.updates):
                _, batch, weights = self.replay.sample(self.batch_size)
                self.learner.step(batch, weights)
            self.replay.trim()

    def counters(self) -> dict[str, float]:
        a, le = self.actor.counters(), self.learner.counters()
        return {"frames": a["frames"], "episodes": a["episodes"], "param_pulls": a["param_pulls"],
                "transitions_sent": a["transitions_sent"], "learner_steps": le["steps"], "pushes": le["pushes"],
                "dropped_outliers": le["dropped_outliers"], "target_refreshes": le["target_refreshes"]}


class LearnerPulls:
    """A bundle actor's parameter source: its learner's latest pull from the server (same process,
    same parameters, no extra round trip), or a pull of its own until that learner has started."""

    def __init__(self, learner: ParamServerLearner, own: ParamServerSource):
        self.learner, self.own = learner, own
        self._seen = -1

    def latest(self) -> tuple[dict[str, torch.Tensor], int] | None:
        if self.learner.pulls == 0:
            return self.own.latest()
        if self.learner.pulls == self._seen:
            return None  # nothing new since the last time
        self._seen = self.learner.pulls
        return self.learner.params()


class Gorila(Hooks):
    """Its config is GorilaConfig; its hooks are the driver's view of the bundles and the shards. A bundle
    (and the shared table) is built from this builder itself, through its Protocol (contracts.BundleParts)."""

    def __init__(self, cfg: GorilaConfig):
        self.cfg, self.env = cfg, DiscreteEnv.probe(cfg, cfg.architecture)
        # "spare": drawn, unused (the layout runs were seeded with)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "spare", "net"), blocks=("replay",))
        self.n_params = int(sum(p.numel() for p in self.make_net().parameters()))
        self.shards().slices()  # too many shards fails here

    def topology(self) -> Topology:
        """In one process a round is one bundle round of each bundle in turn (the paper's bundles, serialised).
        The server's version (the minimum over shards) is the run's progress, and the shards' states its checkpoint."""
        cfg = self.cfg
        roles = (Role("bundles", cfg.actors, BundleWorker, ("ps", "replay"), Work("rounds", 1),
                      torch_threads=cfg.torch_threads or 1, parts=self),
                 Role("ps", cfg.ps.shards, ShardWorker, fault="ps_restarts", parts=self.shards()),
                 Role("replay", 1 if cfg.replay.mode == "global" else 0, ReplayShard, parts=self),
                 evaluator_role(cfg, self.make_evaluator))
        checkpoints = Checkpoints(cfg.architecture, cfg.env, self.make_net, {"ps": (cfg.ps.shards, "ps.shards")},
                                  {"ps_shards": cfg.ps.shards})
        return Topology(roles, checkpoints, saved_role="ps", stats_roles=("ps", "replay"),
                        fault_gauges=("dropped_stale", "dropped_outliers", "ps_waits"), hooks=self)

    def shards(self) -> ShardSpec:
        """AdaGrad (the paper's) on every shard, dropping gradients staler than ps.staleness_bound. A
        shard's version counts global updates: `bundle.updates` per `bundle.actor_steps` agent steps of
        each bundle, so annealing spans max_frames / (actor_steps * frame_skip) * updates of them."""
        cfg, le, p = self.cfg, self.cfg.learner, self.cfg.ps
        options: dict[str, Any] = {"optimizer": le.optimizer, "lr": le.lr,
                                   "staleness_bound": None if p.staleness_bound < 0 else p.staleness_bound}
        if le.anneal:
            b = cfg.bundle
            frames_per_round = b.actor_steps * self.env.frame_skip
            options["anneal_updates"] = max(1, round(cfg.max_frames * b.updates / frames_per_round))
        return ShardSpec(self.make_net, self.n_params, p.shards, options)

    def shard_client(self, shards: list[Any], transport: Any) -> ShardedParameterServer:
        return self.shards().client(shards, transport)

    def policy(self, roles: dict[str, list[Any]], transport: Any) -> tuple[Any, int]:
        return shards_policy(self.shards(), roles, transport)

    def counters(self, totals: dict[str, float], served: dict[str, list[dict[str, Any]]],
                 reported: dict[str, dict[int, dict[str, float]]]) -> dict[str, float]:
        """gorila_counters' names; the bundles' own tables' stats come with their reports."""
        bundles = {k.removeprefix("bundles/"): v for k, v in totals.items() if k.startswith("bundles/")}
        states = list(reported.get("bundles", {}).values())
        ps = shard_counters(served["ps"]) if served.get("ps") else {"version": 0, "applied": 0, "dropped_stale": 0}
        local = [{k.removeprefix("replay/"): v for k, v in s.items() if k.startswith("replay/")} for s in states]
        c = gorila_counters(bundles, ps, served.get("replay") or [r for r in local if r])
        c["bundles/ps_waits"] = sum(s.get("ps_waits", 0) for s in states)
        return c

    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        return gorila_gauges(counters)

    def shared_replay_client(self, shards: list[Any], transport: Any, index: int) -> ShardedReplay:
        """A bundle's client of the shared table (replay.mode=global): it samples on its own seed."""
        return ShardedReplay(shards, UniformSampler(), seed=self.cfg.seed + index, call=transport.call,
                             gather=transport.gather, limiter=self.replay_limiter())

    def compressed(self) -> tuple[str, ...]:
        return frame_fields(self.cfg.replay.compress, self.env.obs_shape)

    def codec(self) -> str:
        return "zlib"

    # ---- parts ---------------------------------------------------------------------------
    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])  # every copy starts from the same initial parameters
        if (net := user_network(self.cfg, self.env.spaces, "q")) is not None:
            return cast(torch.nn.Module, net)
        return make_q_network(self.env.obs_shape, self.env.num_actions, dueling=self.cfg.net.dueling,
                              hidden=self.cfg.net.hidden)

    def make_shard(self, index: int) -> ParamShard:
        return self.shards().make_shard(index)

    def shard_sizes(self) -> list[int]:
        return self.shards().sizes()

    def replay_args(self, index: int) -> tuple[int, UniformSampler, FifoRemover, int, tuple[str, ...]]:
        """ReplayTable's arguments for table `index` (a bundle's own, or 0: the shared one)."""
        r = self.cfg.replay
        return r.capacity, UniformSampler(), FifoRemover(), self.seeds.blocks["replay"][index], \
            frame_fields(r.compress, self.env.obs_shape)

    def make_replay(self, index: int) -> ReplayTable:
        return ReplayTable(*self.replay_args(index), limiter=self.replay_limiter())

    def replay_limiter(self) -> RateLimiter:
        """A learner starts once its table holds replay.min_size transitions (DQN's replay start)."""
        return MinSize(self.cfg.replay.min_size)

    def epsilon(self, global_updates: int) -> float:
        """Linear from epsilon_start to epsilon_end over the first epsilon_updates global updates."""
        a = self.cfg.actor
        frac = min(1.0, max(0.0, global_updates / a.epsilon_updates))  # -1: nothing pulled yet
        return a.epsilon_start + frac * (a.epsilon_end - a.epsilon_start)

    def make_actor(self, index: int, sink: Sink, ps: Any, source: ParameterSource | None = None) -> Actor:
        cfg, seed = self.cfg, self.seeds.workers[index]
        cap = cfg.max_episode_frames if self.env.atari else None

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cap,
                            screen_size=cfg.screen_size)

        return Actor(env_fn, self.make_net(), [cfg.actor.epsilon_start], sink=sink,
                     source=source or ParamServerSource(ps, self.make_net()), n_step=cfg.learner.n_step,
                     gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size,
                     pull_every=cfg.actor.pull_every, frame_skip=self.env.frame_skip,
                     seed=seed + 1, epsilon_schedule=self.epsilon)

    def make_learner(self, ps: Any, device: str = "cpu") -> ParamServerLearner:
        le = self.cfg.learner
        return ParamServerLearner(DQNLearner(self.make_net(), le, device=device, applies_gradients=False), ps,
                                  target_update=le.target_update, pull_every=le.pull_every_steps,
                                  outlier=LossOutlierFilter(le.outlier_k, le.outlier_warmup))

    def make_bundle(self, index: int, ps: Any, replay: Any, sink: Sink | None = None) -> Bundle:
        """`replay` is what the learner samples; the actor adds to `sink` (default: the same table)."""
        learner = self.make_learner(ps)
        source = LearnerPulls(learner, ParamServerSource(ps, self.make_net()))
        return Bundle(self.make_actor(index, sink if sink is not None else replay, ps, source), replay,
                      learner, self.cfg.bundle, self.cfg.learner.batch_size)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes)

    def params(self, flat: np.ndarray) -> dict[str, torch.Tensor]:
        """The flat parameter vector as the network's state dict (for the evaluator)."""
        return flat_params(self.make_net, flat)

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return shards_policy_params(self, run_dir, checkpoint)


def gorila_counters(totals: dict[str, float], ps: dict[str, int], replays: list[dict[str, Any]]) -> dict[str, float]:
    """The monitor's counters from the bundles' summed counters, the server's and the tables' stats.
    learner/updates is the global update count at the server (what the target refresh follows)."""
    c: dict[str, float] = {f"actors/{k}": totals.get(k, 0)
                           for k in ("frames", "episodes", "param_pulls", "transitions_sent")}
    c.update({"learner/updates": ps["version"], "learner/steps": totals.get("learner_steps", 0),
              "learner/pushes": totals.get("pushes", 0), "learner/dropped_outliers": totals.get("dropped_outliers", 0),
              "learner/target_refreshes": totals.get("target_refreshes", 0),
              "ps/applied": ps["applied"], "ps/dropped_stale": ps["dropped_stale"]})
    for stats in replays:
        for k, v in stats.items():
            c[f"replay/{k}"] = c.get(f"replay/{k}", 0) + v
    return c


def gorila_gauges(c: dict[str, float]) -> dict[str, float]:
    """Columns of every metrics row besides the rates: both safeguards' drops, counted since the start."""
    return {"replay_size": c.get("replay/size", 0), "dropped_outliers": c.get("learner/dropped_outliers", 0),
            "dropped_stale": c.get("ps/dropped_stale", 0), "ps_waits": c.get("bundles/ps_waits", 0)}
