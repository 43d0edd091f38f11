"""Ape-X DQN (Horgan et al. 2018) as a wiring: N epsilon-greedy actors feed one prioritized
replay; one learner trains n-step double-Q on a dueling network and is the actors' parameter source.

This module says what to create and how the parts connect; a runtime (inline, ray) says where."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np

from distrl.algos.q_learning import annealed_epsilon
from distrl.architectures.replay_fed import ReplayFed
from distrl.components.actor import Actor, ParameterSource, Sink, apex_epsilons
from distrl.envs import make_env
from distrl.envs.atari_vector import AtariVector
from distrl.replay import PrioritizedSampler


class Apex(ReplayFed):
    """Its config is ApexConfig; the paper's values are its defaults."""

    architecture = "apex"
    actors_on_gpu = True
    # The paper's learning curves follow its greediest actor: the lowest-epsilon env's returns get a column.
    watched_return: str | None = "return_mean_lowest_epsilon"

    def replay_sampler(self) -> PrioritizedSampler:
        r = self.cfg.replay
        return PrioritizedSampler(r.alpha, r.beta)

    def actor_epsilons(self, index: int) -> list[float]:
        """Each env of each actor gets its own eps_i over all N * envs_per_actor envs."""
        k = self.cfg.actor.envs_per_actor
        eps = apex_epsilons(self.cfg.actors * k, self.cfg.actor.epsilon_base, self.cfg.actor.epsilon_alpha)
        return eps[index * k:(index + 1) * k]

    def epsilon_schedule(self, index: int) -> Callable[[int], np.ndarray] | None:
        """With a warm-up, each eps_i falls linearly from 1 over the first learner updates, so an untrained
        near-greedy policy cannot stand still while replay fills (MinAtar Freeway); none by default."""
        warmup, final = self.cfg.actor.epsilon_warmup_updates, np.asarray(self.actor_epsilons(index))
        if not warmup:
            return None
        return lambda version: annealed_epsilon(final, version, warmup)

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Actor:
        cfg, seed = self.cfg, self.seeds.workers[index]
        cap = cfg.max_episode_frames if self.atari else None
        k = cfg.actor.envs_per_actor

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cap)

        envs = AtariVector(cfg.env, k, seed=seed * 1000, max_episode_frames=cap) if cfg.actor.vector_env else None
        # The lowest epsilon of all is the last env of the last actor: its returns get their own column.
        return Actor(env_fn, self.make_net(), self.actor_epsilons(index), sink=sink, source=source, envs=envs,
                     epsilon_schedule=self.epsilon_schedule(index),
                     n_step=cfg.learner.n_step, gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size,
                     pull_every=cfg.actor.pull_every, frame_skip=self.frame_skip, seed=seed + k,
                     watch_env=k - 1 if index == cfg.actors - 1 else None)

