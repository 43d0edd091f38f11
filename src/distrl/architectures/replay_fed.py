"""The replay-fed shape that DQN, Ape-X, Ape-X DPG and R2D2 share, as parts a builder composes: actors feed
a (sharded) replay and pull from one learner, which samples the replay and is their parameter source. A
builder says how its actors explore, how its replay samples and evicts, and what its learner learns;
`replay_fed` turns those into the run's Topology. Each role is built from its own part (ActorFeed,
LearnerFeed, ReplaySpec, Evaluation): on Ray that part is all its process receives.

This module says what to create and how the parts connect; a placement says where."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

from distrl.architectures.base import Hooks, Pacing, Role, Topology, Work, evaluator_role
from distrl.architectures.common import Checkpoints, DiscreteEnv, default_torch_threads, user_network
from distrl.components.learner import DQNLearner
from distrl.components.workers import ActorWorker, LearnerWorker, ReplayShard
from distrl.contracts import ParameterSource, Sink, Transport
from distrl.nets import make_q_network
from distrl.nets.precision import use_bf16
from distrl.replay import FifoRemover, MinSize, RateLimiter, ReplayTable
from distrl.replay.removers import Remover
from distrl.replay.samplers import Sampler
from distrl.replay.sharded import ShardedReplay
from distrl.replay.table import frame_fields


@dataclass(frozen=True)
class ReplaySpec:
    """A run's replay (contracts.ReplayParts): each shard's table, and the client that reaches them all.
    `compressed` fields are deflated with `codec` in the tables and on the way to a remote one; `shared`
    stacks are kept and sent frame by frame (replay/frames.py). Learning starts once the replay holds
    `min_size` items."""

    capacity: int  # per shard
    sampler: Callable[[], Sampler]
    seed: int
    min_size: int
    remover: Callable[[], Remover] = FifoRemover
    compressed: tuple[str, ...] = ()
    codec: str = "zlib"
    shared: tuple[str, ...] = ()

    def limiter(self) -> RateLimiter:
        return MinSize(self.min_size)

    def replay_args(self, index: int) \
            -> tuple[int, Sampler, Remover, int, tuple[str, ...], RateLimiter, str, tuple[str, ...]]:
        """ReplayTable's arguments for shard `index`."""
        return (self.capacity, self.sampler(), self.remover(), self.seed + index, self.compressed, self.limiter(),
                self.codec, self.shared)

    def table(self, index: int = 0) -> ReplayTable:
        return ReplayTable(*self.replay_args(index))

    def client(self, shards: list[Any], transport: Transport) -> ShardedReplay:
        return ShardedReplay(shards, self.sampler(), seed=self.seed, call=transport.call, gather=transport.gather,
                             limiter=self.limiter(), priority_batch=transport.priority_batch)


def replay_spec(cfg: Any, sampler: Callable[[], Sampler], seed: int, image_fields: tuple[str, ...] = (),
                stacks: bool = False, remover: Callable[[], Remover] = FifoRemover) -> ReplaySpec:
    """The replay its config's `replay` section says, its shards sharing replay.capacity; `image_fields` are
    compressed (replay.compress) and, where they are frame stacks (Atari's), kept frame by frame
    (replay.share_frames)."""
    r = cfg.replay
    return ReplaySpec(-(-r.capacity // r.shards), sampler, seed, r.min_size, remover,
                      image_fields if r.compress else (), r.codec,
                      image_fields if stacks and getattr(r, "share_frames", False) else ())


@dataclass(frozen=True)
class ActorFeed:
    """An actor's part (contracts.ActorParts): the replay it feeds, and how to build the actor."""

    replay: ReplaySpec
    make_actor: Callable[[int, Sink, ParameterSource], Any]


@dataclass(frozen=True)
class LearnerFeed:
    """The learner's part (contracts.LearnerParts): the replay it samples, how to build the learner, and
    its sampling: batch, prefetch depth and threads, replay trims, the fields a GPU learner stages."""

    replay: ReplaySpec
    make_learner: Callable[[str], Any]
    batch_size: int
    prefetch: int
    prefetch_threads: int
    trim_every: int
    image_fields: tuple[str, ...] = ()


class ReplayHooks(Hooks):
    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        return {"replay_waits": counters.get("learner/replay_waits", 0)}


def replay_fed(builder: Any, replay: ReplaySpec, *, image_fields: tuple[str, ...] = (), actors_on_gpu: bool = False,
               items_per_step: float = 1.0, watched_return: str | None = None) -> Topology:
    """The Topology of a replay-fed run from its builder's make_actor, make_learner, make_evaluator and
    make_net. Actors feed the replay shards and pull from the learner, which samples the shards. In one
    process a round is each actor's steps, then the learner's batches: as many as the pacing allows, or
    one a round without a ratio. A learner with a process of its own gives Atari's CNN every core, a small
    net one thread (Ray would give any one). `items_per_step`: replay items an actor's env step makes (R2D2:
    one sequence every `period` steps); replay.samples_per_insert counts them."""
    cfg = builder.cfg
    spi, le = cfg.replay.samples_per_insert, cfg.learner
    pacing = Pacing(spi, cfg.replay.min_size, le.batch_size, per_step=items_per_step,
                    envs=cfg.actor.envs_per_actor) if spi > 0 else None
    learner = LearnerFeed(replay, builder.make_learner, le.batch_size, le.prefetch, le.prefetch_threads,
                          cfg.replay.trim_every, image_fields)
    learner_threads = cfg.torch_threads or default_torch_threads(builder.env.obs_shape)
    roles = (Role("actors", cfg.actors, ActorWorker, ("replay", "learner"), Work("steps"),
                  gpu="actor" if actors_on_gpu else "", parts=ActorFeed(replay, builder.make_actor)),
             Role("learner", 1, LearnerWorker, ("replay",), Work("updates", math.inf if pacing else 1),
                  gpu="learner", threads=4, torch_threads=learner_threads, parts=learner),
             Role("replay", cfg.replay.shards, ReplayShard, parts=replay),
             evaluator_role(cfg, builder.make_evaluator))
    return Topology(roles, Checkpoints(cfg.architecture, cfg.env, builder.make_net), pacing,
                    stats_roles=("replay",), fault_gauges=("replay_waits",), watched_return=watched_return,
                    hooks=ReplayHooks())


# ---- what the Q-learning builders share ----------------------------------------------------------

def image_fields(env: DiscreteEnv) -> tuple[str, ...]:
    """The fields of a transition that hold images: what the replay compresses and a GPU learner stages."""
    return frame_fields(True, env.obs_shape)


def q_network(cfg: Any, env: DiscreteEnv, seed: int) -> torch.nn.Module:
    """The user's network (net.factory), else distrl's Q network for the env's observations, seeded."""
    torch.manual_seed(seed)
    if (net := user_network(cfg, env.spaces, "q")) is not None:
        return cast(torch.nn.Module, net)
    return make_q_network(env.obs_shape, env.num_actions, dueling=cfg.net.dueling, hidden=cfg.net.hidden)


def q_learner(cfg: Any, net: torch.nn.Module, device: str) -> DQNLearner:
    return DQNLearner(net, cfg.learner, device=device, bf16=use_bf16(cfg.learner.bf16, device),
                      channels_last=cfg.learner.channels_last)


def learner_policy(builder: Any, run_dir: Path,
                   checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The online network of `checkpoint` (default: the latest), for `distrl eval`."""
    learner = builder.make_learner()
    data = builder.topology().checkpoints.restore(run_dir, path=checkpoint)
    learner.load_state_dict(data["roles"]["learner"][0])
    return learner.latest()[0], {"checkpoint": data["path"], "updates": learner.updates}
