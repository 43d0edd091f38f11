"""Ape-X DQN (Horgan et al. 2018) as a builder: N epsilon-greedy actors feed one prioritized replay; one
learner trains n-step double-Q on a dueling network and is the actors' parameter source.

This module says what to create and how the parts connect (replay_fed.py); a placement says where."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from distrl.algos.q_learning import annealed_epsilon
from distrl.architectures.apex.config import ApexConfig
from distrl.architectures.base import Topology
from distrl.architectures.common import DiscreteEnv, Seeds
from distrl.architectures.replay_fed import (
    ReplaySpec,
    image_fields,
    learner_policy,
    q_learner,
    q_network,
    replay_fed,
    replay_spec,
)
from distrl.components.actor import Actor, apex_epsilons
from distrl.components.evaluator import Evaluator
from distrl.components.learner import DQNLearner
from distrl.contracts import ParameterSource, Sink
from distrl.envs import make_env
from distrl.envs.atari_vector import AtariVector
from distrl.replay import PrioritizedSampler, ReplayTable

# The paper's learning curves follow its greediest actor: the lowest-epsilon env's returns get a column.
WATCHED = "return_mean_lowest_epsilon"


class Apex:
    """Its config is ApexConfig; the paper's values are its defaults."""

    def __init__(self, cfg: ApexConfig):
        self.cfg, self.env = cfg, DiscreteEnv.probe(cfg, cfg.architecture)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net"))

    def topology(self) -> Topology:
        return replay_fed(self, self.replay(), image_fields=image_fields(self.env), actors_on_gpu=True,
                          watched_return=WATCHED)

    def replay(self) -> ReplaySpec:
        """Proportional prioritized sampling (alpha, with importance weights beta), the oldest out first."""
        r = self.cfg.replay
        return replay_spec(self.cfg, partial(PrioritizedSampler, r.alpha, r.beta), self.seeds["replay"],
                           image_fields(self.env), self.env.atari)

    def make_replay(self) -> ReplayTable:
        return self.replay().table()

    def make_net(self) -> torch.nn.Module:
        return q_network(self.cfg, self.env, self.seeds["net"])

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Actor:
        cfg, seed, env = self.cfg, self.seeds.workers[index], self.env
        cap = cfg.max_episode_frames if env.atari else None
        k = cfg.actor.envs_per_actor

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cap,
                            screen_size=cfg.screen_size)

        envs = (AtariVector(cfg.env, k, seed=seed * 1000, max_episode_frames=cap, screen_size=cfg.screen_size)
                if cfg.actor.vector_env else None)
        # The lowest epsilon of all is the last env of the last actor: its returns get their own column.
        return Actor(env_fn, self.make_net(), self.actor_epsilons(index), sink=sink, source=source, envs=envs,
                     epsilon_schedule=self.epsilon_schedule(index),
                     n_step=cfg.learner.n_step, gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size,
                     pull_every=cfg.actor.pull_every, frame_skip=env.frame_skip, seed=seed + k,
                     watch_env=k - 1 if index == cfg.actors - 1 else None, bf16=cfg.actor.bf16)

    def actor_epsilons(self, index: int) -> list[float]:
        """Each env of each actor gets its own eps_i over all N * envs_per_actor envs."""
        return actor_epsilons(self.cfg, index)

    def epsilon_schedule(self, index: int) -> Callable[[int], np.ndarray] | None:
        """With a warm-up, each eps_i falls linearly from 1 over the first learner updates, so an untrained
        near-greedy policy cannot stand still while replay fills (MinAtar Freeway); none by default."""
        warmup, final = self.cfg.actor.epsilon_warmup_updates, np.asarray(self.actor_epsilons(index))
        if not warmup:
            return None
        return lambda version: np.asarray(annealed_epsilon(final, version, warmup))  # final is one per env

    def make_learner(self, device: str = "cpu") -> DQNLearner:
        return q_learner(self.cfg, self.make_net(), device)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes)

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return learner_policy(self, run_dir, checkpoint)


def actor_epsilons(cfg: Any, index: int) -> list[float]:
    """Actor `index`'s share of the paper's eps_i = base^(1 + i/(N-1) alpha) over all N * envs_per_actor envs."""
    k = cfg.actor.envs_per_actor
    eps = apex_epsilons(cfg.actors * k, cfg.actor.epsilon_base, cfg.actor.epsilon_alpha)
    return eps[index * k:(index + 1) * k]
