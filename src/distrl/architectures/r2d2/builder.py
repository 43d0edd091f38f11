"""R2D2 (Kapturowski et al. 2019) as a builder: Ape-X's actors, prioritized replay and learner, with a
recurrent network; the actors send sequences with the LSTM state they began with, and the learner
burns each in from that state before learning from its trace. What is new lives with its kind
(replay/sequence_adder.py, components/recurrent_actor.py, components/r2d2_learner.py,
nets/recurrent_q.py, algos/r2d2.py).

Its defaults are the paper's: trace 80 after a burn-in of 40, sequences every 80 steps (overlapping
by the burn-in), n = 5, gamma 0.997, value rescaling with eps 1e-3 instead of reward clipping, Adam
1e-4 (eps 1e-3), targets every 2,500 updates, priorities 0.9 max + 0.1 mean |TD error| with exponent
0.9, importance sampling 0.6, batch 64, an LSTM of 512, Ape-X's per-actor epsilons."""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from distrl.architectures.apex.builder import WATCHED, actor_epsilons
from distrl.architectures.base import Topology
from distrl.architectures.common import DiscreteEnv, Seeds
from distrl.architectures.r2d2.config import R2D2Config
from distrl.architectures.replay_fed import ReplaySpec, learner_policy, replay_fed, replay_spec
from distrl.components.evaluator import Evaluator
from distrl.components.r2d2_learner import R2D2Learner
from distrl.components.recurrent_actor import RecurrentActor
from distrl.contracts import ParameterSource, Sink
from distrl.envs import make_env
from distrl.nets.precision import use_bf16
from distrl.nets.recurrent_q import RecurrentQNetwork
from distrl.replay import PrioritizedSampler, ReplayTable


class R2D2:
    """Its config is R2D2Config; the replay's items are sequences (replay.* counts them)."""

    def __init__(self, cfg: R2D2Config):
        self.cfg, self.env = cfg, DiscreteEnv.probe(cfg, cfg.architecture)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net"))

    def topology(self) -> Topology:
        """Ape-X's, with a sequence every `period` steps: the replay ratio and replay.min_size count sequences.
        Its actors keep their LSTM states on the CPU (RecurrentActor has no place())."""
        return replay_fed(self, self.replay(), image_fields=self.image_fields(), items_per_step=1.0 / self.period(),
                          watched_return=WATCHED)

    def image_fields(self) -> tuple[str, ...]:
        """A sequence's observations, one field, where they are images (each frame once already)."""
        return ("obs",) if len(self.env.obs_shape) == 3 else ()

    def replay(self) -> ReplaySpec:
        r = self.cfg.replay
        return replay_spec(self.cfg, partial(PrioritizedSampler, r.alpha, r.beta), self.seeds["replay"],
                           self.image_fields())

    def make_replay(self) -> ReplayTable:
        return self.replay().table()

    def period(self) -> int:
        return self.cfg.actor.sequence_period or self.cfg.learner.trace

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])
        return RecurrentQNetwork(self.env.obs_shape, self.env.num_actions, lstm_units=self.cfg.net.lstm_units,
                                 hidden=self.cfg.net.hidden)

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> RecurrentActor:
        cfg, seed, k = self.cfg, self.seeds.workers[index], self.cfg.actor.envs_per_actor
        cap = cfg.max_episode_frames if self.env.atari else None

        def env_fn(j: int) -> gym.Env:  # unclipped rewards, and a lost life is no episode end (the paper's protocol)
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cap, clip_rewards=False,
                            screen_size=cfg.screen_size)

        le = cfg.learner
        return RecurrentActor(env_fn, self.make_net(), actor_epsilons(cfg, index), sink=sink, source=source,
                              burn_in=le.burn_in, trace=le.trace, period=self.period(), n_step=le.n_step,
                              gamma=le.gamma, rescale_eps=le.rescale_eps, priority_eta=le.priority_eta,
                              flush_size=cfg.actor.flush_size, pull_every=cfg.actor.pull_every,
                              frame_skip=self.env.frame_skip, seed=seed + k,
                              watch_env=k - 1 if index == cfg.actors - 1 else None)

    def make_learner(self, device: str = "cpu") -> R2D2Learner:
        le = self.cfg.learner
        return R2D2Learner(self.make_net(), dataclasses.replace(le, bf16=use_bf16(le.bf16, device)), device=device)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes, policy="recurrent_q")

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return learner_policy(self, run_dir, checkpoint)
