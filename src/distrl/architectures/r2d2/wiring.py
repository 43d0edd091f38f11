"""R2D2 (Kapturowski et al. 2019) as a wiring: Ape-X's actors, prioritized replay and learner, with a
recurrent network; the actors send sequences with the LSTM state they began with, and the learner
burns each in from that state before learning from its trace. The first architecture on the declared
roles alone: what is new lives with its kind (replay/sequence_adder.py, components/recurrent_actor.py,
components/r2d2_learner.py, nets/recurrent_q.py, algos/r2d2.py).

Its defaults are the paper's: trace 80 after a burn-in of 40, sequences every 80 steps (overlapping
by the burn-in), n = 5, gamma 0.997, value rescaling with eps 1e-3 instead of reward clipping, Adam
1e-4 (eps 1e-3), targets every 2,500 updates, priorities 0.9 max + 0.1 mean |TD error| with exponent
0.9, importance sampling 0.6, batch 64, an LSTM of 512, Ape-X's per-actor epsilons."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import torch

from distrl.architectures.apex.wiring import Apex
from distrl.components.actor import ParameterSource, Sink
from distrl.components.evaluator import Evaluator
from distrl.components.r2d2_learner import R2D2Learner
from distrl.components.recurrent_actor import RecurrentActor
from distrl.envs import make_env
from distrl.nets.precision import use_bf16
from distrl.nets.recurrent_q import RecurrentQNetwork


class R2D2(Apex):
    """Its config is R2D2Config; the replay's items are sequences (replay.* counts them)."""

    architecture = "r2d2"
    actors_on_gpu = False  # its actors keep their LSTM states on the CPU (RecurrentActor has no place())

    def image_fields(self) -> tuple[str, ...]:
        """A sequence's observations, one field, where they are images."""
        return ("obs",) if len(self.obs_shape) == 3 else ()

    def shared_frames(self) -> tuple[str, ...]:
        return ()  # a sequence's frames are one field already, each frame once

    def period(self) -> int:
        return self.cfg.actor.sequence_period or self.cfg.learner.trace

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])
        return RecurrentQNetwork(self.obs_shape, self.num_actions, lstm_units=self.cfg.net.lstm_units,
                                 hidden=self.cfg.net.hidden)

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> RecurrentActor:
        cfg, seed, k = self.cfg, self.seeds.workers[index], self.cfg.actor.envs_per_actor
        cap = cfg.max_episode_frames if self.atari else None

        def env_fn(j: int) -> gym.Env:  # unclipped rewards, and a lost life is no episode end (the paper's protocol)
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cap, clip_rewards=False)

        le = cfg.learner
        return RecurrentActor(env_fn, self.make_net(), self.actor_epsilons(index), sink=sink, source=source,
                              burn_in=le.burn_in, trace=le.trace, period=self.period(), n_step=le.n_step,
                              gamma=le.gamma, rescale_eps=le.rescale_eps, priority_eta=le.priority_eta,
                              flush_size=cfg.actor.flush_size, pull_every=cfg.actor.pull_every,
                              frame_skip=self.frame_skip, seed=seed + k,
                              watch_env=k - 1 if index == cfg.actors - 1 else None)

    def make_learner(self, device: str = "cpu") -> R2D2Learner:
        le = self.cfg.learner
        return R2D2Learner(self.make_net(), dataclasses.replace(le, bf16=use_bf16(le.bf16, device)), device=device)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes, policy="recurrent_q")

    def items_per_step(self) -> float:
        """A sequence every `period` steps: the replay ratio and replay.min_size count sequences."""
        return 1.0 / self.period()
