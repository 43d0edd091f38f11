"""The replay-fed wiring that Ape-X, Ape-X DPG and DQN share: actors feed a (sharded) replay and pull
from one learner, which samples the replay and is their parameter source. A subclass says how its
actors explore, how the replay samples and evicts, and what the learner learns.

This module says what to create and how the parts connect; a placement says where."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from distrl.architectures.base import Pacing, Role, Wiring, Work
from distrl.architectures.common import (
    Seeds,
    default_torch_threads,
    frame_skip,
    probe_discrete_env,
    set_torch_threads,
    user_network,
)
from distrl.components.actor import Actor, ParameterSource, Sink
from distrl.components.evaluator import Evaluator
from distrl.components.learner import DQNLearner
from distrl.components.workers import ActorWorker, EvaluatorWorker, LearnerWorker, ReplayShard
from distrl.contracts import Transport
from distrl.envs import is_atari
from distrl.nets import make_q_network
from distrl.nets.precision import use_bf16
from distrl.replay import FifoRemover, MinSize, RateLimiter, ReplayTable
from distrl.replay.samplers import Sampler
from distrl.replay.sharded import ShardedReplay
from distrl.replay.table import frame_fields


class ReplayFed(Wiring):
    """Q-learning from a replay by default (its net, learner, evaluator); `make_actor` and
    `replay_sampler` are the subclass's."""

    architecture: str
    actors_on_gpu = False  # whether its actors can run their forward pass on a share of a GPU (Role.gpu)
    stats_roles = ("replay",)
    fault_gauges = ("replay_waits",)

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.obs_shape, self.num_actions, self.spaces = probe_discrete_env(cfg, self.architecture)
        user_network(cfg, self.spaces, "q")  # a user's network is checked before anything starts
        self.atari = is_atari(cfg.env)
        self.frame_skip = frame_skip(cfg.env)
        set_torch_threads(cfg.torch_threads, self.obs_shape)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net"))

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])
        if (net := user_network(self.cfg, self.spaces, "q")) is not None:
            return net
        return make_q_network(self.obs_shape, self.num_actions, dueling=self.cfg.net.dueling,
                              hidden=self.cfg.net.hidden)

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Actor:
        raise NotImplementedError

    def replay_sampler(self) -> Sampler:
        raise NotImplementedError

    def roles(self) -> list[Role]:
        """Actors feed the replay shards and pull from the learner, which samples the shards. In one
        process a round is each actor's steps, then the learner's batches: as many as the pacing allows,
        or one a round without a ratio. A learner with a process of its own gives Atari's CNN every core, a
        small net one thread (Ray would give any one)."""
        cfg = self.cfg
        learner_threads = cfg.torch_threads or default_torch_threads(self.obs_shape)
        paced = self.pacing() is not None
        return [Role("actors", cfg.actors, ActorWorker, ("replay", "learner"), Work("steps"),
                     gpu="actor" if self.actors_on_gpu else ""),
                Role("learner", 1, LearnerWorker, ("replay",), Work("updates", math.inf if paced else 1),
                     gpu="learner", threads=4, torch_threads=learner_threads),
                Role("replay", cfg.replay.shards, ReplayShard),
                Role("evaluator", 1 if cfg.eval_episodes else 0, EvaluatorWorker)]

    def replay_args(self, index: int) -> tuple:
        """ReplayTable's arguments for shard `index`."""
        r = self.cfg.replay
        return (-(-r.capacity // r.shards), self.replay_sampler(), self.replay_remover(),
                self.seeds["replay"] + index, self.compressed(), self.replay_limiter(), self.codec(),
                self.shared_frames())

    def image_fields(self) -> tuple[str, ...]:
        """The fields that hold images: what a GPU learner stages (components/staging.py)."""
        return frame_fields(True, self.obs_shape)

    def compressed(self) -> tuple[str, ...]:
        return self.image_fields() if self.cfg.replay.compress else ()

    def shared_frames(self) -> tuple[str, ...]:
        """The Atari stacks kept frame by frame, each frame once (replay.share_frames, replay/frames.py)."""
        return self.image_fields() if self.atari and self.cfg.replay.share_frames else ()

    def codec(self) -> str:
        return self.cfg.replay.codec

    def make_replay(self) -> ReplayTable:
        return ReplayTable(*self.replay_args(0))

    def replay_client(self, shards: list, transport: Transport) -> ShardedReplay:
        return ShardedReplay(shards, self.replay_sampler(), seed=self.seeds["replay"], call=transport.call,
                             gather=transport.gather, limiter=self.replay_limiter(),
                             priority_batch=transport.priority_batch)

    def pacing(self) -> Pacing | None:
        """replay.samples_per_insert held on both placements: actors wait while their inserts outrun the
        learner's samples by more than the placement's band, and the learner takes what the ratio allows."""
        cfg, spi = self.cfg, self.cfg.replay.samples_per_insert
        if spi <= 0:
            return None
        return Pacing(spi, cfg.replay.min_size, cfg.learner.batch_size, per_step=self.items_per_step(),
                      envs=cfg.actor.envs_per_actor)

    def items_per_step(self) -> float:
        """Replay items an actor's env step makes: one transition."""
        return 1.0

    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        return {"replay_waits": counters.get("learner/replay_waits", 0)}

    def replay_limiter(self) -> RateLimiter:
        """Learning starts once the replay holds replay.min_size transitions."""
        return MinSize(self.cfg.replay.min_size)

    def replay_remover(self) -> FifoRemover:
        """The oldest data leave first (DQN, Ape-X DQN)."""
        return FifoRemover()

    def make_learner(self, device: str = "cpu") -> DQNLearner:
        le = self.cfg.learner
        return DQNLearner(self.make_net(), le, device=device, bf16=use_bf16(le.bf16, device))

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes)

    def learner_step(self, replay: ReplayTable, learner: DQNLearner, sampled: Any = None) -> dict[str, float]:
        """Sample (or take a prefetched sample), train, write back priorities, trim on schedule."""
        keys, batch, weights = sampled if sampled is not None else replay.sample(self.cfg.learner.batch_size)
        metrics, priorities = learner.step(batch, weights)
        replay.update_priorities(keys, priorities)
        if learner.updates % self.cfg.replay.trim_every == 0:
            replay.trim()
        return metrics

    def policy_params(self, run_dir: Path) -> tuple[dict[str, torch.Tensor], dict]:
        """The latest checkpoint's online network, for `distrl eval`."""
        learner = self.make_learner()
        learner.load_state_dict((data := self.restore(run_dir))["roles"]["learner"][0])
        return learner.latest()[0], {"checkpoint": data["path"], "updates": learner.updates}
