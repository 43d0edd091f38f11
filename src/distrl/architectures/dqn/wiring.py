"""DQN (Mnih et al. 2015) as a wiring: one epsilon-greedy actor fills a uniform replay, one learner
trains 1-step Q-learning with a target network (Huber loss, RMSProp) and is the actor's parameter
source. The baseline every paper here compares with, and the shape of a new architecture: one file of
what to build, on the roles and contracts every wiring shares (contracts.py, replay_fed.py).

Its defaults are the paper's (extended data table 1): minibatch 32, replay 1M, agent history 4,
target network every 10,000 updates, gamma 0.99, action repeat 4, an update every 4 actions (8
samples per insert), RMSProp lr 2.5e-4 with momentum 0.95 and min squared gradient 0.01 (distrl's
centered RMSProp: its mean square starts at 1, the paper's at 0), epsilon 1 -> 0.1 over 1M actions,
replay start 50,000, up to 30 no-op starts, evaluation at epsilon 0.05 (the "dqn" protocol)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from distrl.algos.q_learning import annealed_epsilon
from distrl.architectures.replay_fed import ReplayFed
from distrl.components.actor import Actor, ParameterSource, Sink
from distrl.envs import make_env
from distrl.replay import UniformSampler


class DQN(ReplayFed):
    """Its config is DQNConfig."""

    architecture = "dqn"
    actors_on_gpu = True
    watched_return = None

    def replay_sampler(self) -> UniformSampler:
        return UniformSampler()

    def anneal_updates(self) -> int:
        """Learner updates over which epsilon falls: the replay ratio ties updates to actions (one per
        4 after the replay start), so this is DQN's anneal over `epsilon_steps` actions, with epsilon 1
        during the replay start. Every env of every actor anneals alike."""
        c = self.cfg
        steps = max(1, c.actor.epsilon_steps - c.replay.min_size)
        return max(1, round(steps * c.replay.samples_per_insert / c.learner.batch_size))

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Actor:
        cfg, seed = self.cfg, self.seeds.workers[index]
        k, final, anneal = cfg.actor.envs_per_actor, cfg.actor.epsilon_final, self.anneal_updates()

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j, max_episode_frames=cfg.max_episode_frames
                            if self.atari else None)

        return Actor(env_fn, self.make_net(), [final] * k, sink=sink, source=source, n_step=cfg.learner.n_step,
                     gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size, pull_every=cfg.actor.pull_every,
                     frame_skip=self.frame_skip, seed=seed + k,
                     epsilon_schedule=lambda version: annealed_epsilon(np.full(k, final), version, anneal))
