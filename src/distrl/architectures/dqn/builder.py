"""DQN (Mnih et al. 2015) as a builder: one epsilon-greedy actor fills a uniform replay, one learner
trains 1-step Q-learning with a target network (Huber loss, RMSProp) and is the actor's parameter
source. The baseline every paper here compares with, and the shape of a new architecture: what to
build, composed from the replay-fed parts (replay_fed.py).

Its defaults are the paper's (extended data table 1): minibatch 32, replay 1M, agent history 4,
target network every 10,000 updates, gamma 0.99, action repeat 4, an update every 4 actions (8
samples per insert), RMSProp lr 2.5e-4 with momentum 0.95 and min squared gradient 0.01 (distrl's
centered RMSProp: its mean square starts at 1, the paper's at 0), epsilon 1 -> 0.1 over 1M actions,
replay start 50,000, up to 30 no-op starts, evaluation at epsilon 0.05 (the "dqn" protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from distrl.algos.q_learning import annealed_epsilon
from distrl.architectures.base import Topology
from distrl.architectures.common import DiscreteEnv, Seeds
from distrl.architectures.dqn.config import DQNConfig
from distrl.architectures.replay_fed import (
    ReplaySpec,
    image_fields,
    learner_policy,
    q_learner,
    q_network,
    replay_fed,
    replay_spec,
)
from distrl.components.actor import Actor
from distrl.components.evaluator import Evaluator
from distrl.components.learner import DQNLearner
from distrl.contracts import ParameterSource, Sink
from distrl.envs import make_env
from distrl.replay import ReplayTable, UniformSampler


class DQN:
    """Its config is DQNConfig."""

    def __init__(self, cfg: DQNConfig):
        self.cfg, self.env = cfg, DiscreteEnv.probe(cfg, cfg.architecture)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net"))

    def topology(self) -> Topology:
        return replay_fed(self, self.replay(), image_fields=image_fields(self.env), actors_on_gpu=True)

    def replay(self) -> ReplaySpec:
        """Uniform sampling, the oldest out first."""
        return replay_spec(self.cfg, UniformSampler, self.seeds["replay"], image_fields(self.env), self.env.atari)

    def make_replay(self) -> ReplayTable:
        return self.replay().table()

    def make_net(self) -> torch.nn.Module:
        return q_network(self.cfg, self.env, self.seeds["net"])

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Actor:
        cfg, seed, env = self.cfg, self.seeds.workers[index], self.env
        k, final, anneal = cfg.actor.envs_per_actor, cfg.actor.epsilon_final, self.anneal_updates()

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cfg.max_episode_frames
                            if env.atari else None, screen_size=cfg.screen_size)

        return Actor(env_fn, self.make_net(), [final] * k, sink=sink, source=source, n_step=cfg.learner.n_step,
                     gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size, pull_every=cfg.actor.pull_every,
                     frame_skip=env.frame_skip, seed=seed + k,
                     epsilon_schedule=lambda version: annealed_epsilon(np.full(k, final), version, anneal))

    def anneal_updates(self) -> int:
        """Learner updates over which epsilon falls: the replay ratio ties updates to actions (one per
        4 after the replay start), so this is DQN's anneal over `epsilon_steps` actions, with epsilon 1
        during the replay start. Every env of every actor anneals alike."""
        c = self.cfg
        steps = max(1, c.actor.epsilon_steps - c.replay.min_size)
        return max(1, round(steps * c.replay.samples_per_insert / c.learner.batch_size))

    def make_learner(self, device: str = "cpu") -> DQNLearner:
        return q_learner(self.cfg, self.make_net(), device)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes)

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return learner_policy(self, run_dir, checkpoint)
