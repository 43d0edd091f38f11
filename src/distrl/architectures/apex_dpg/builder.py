"""Ape-X DPG (Horgan et al. 2018, appendix D) as a builder: Ape-X's shape (N actors, one central
prioritized replay, one prefetching learner that is the actors' parameter source) with a
deterministic actor and a critic. Actors add Gaussian noise (sigma 0.3) and compute the initial
priorities with the critic; the replay keeps its capacity by prioritized eviction (alpha_evict
-0.4), not FIFO. Ape-X's topology (replay_fed.py) with its own parts.

This module says what to create and how the parts connect; a runtime (inline, ray) says where."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from distrl.architectures.apex_dpg.config import ApexDPGConfig
from distrl.architectures.base import Topology
from distrl.architectures.common import Seeds, observation_shape, set_torch_threads, user_network
from distrl.architectures.replay_fed import ReplaySpec, learner_policy, replay_fed, replay_spec
from distrl.components.actor import ParameterSource, Sink
from distrl.components.dpg_actor import NoisyActor
from distrl.components.dpg_learner import DPGLearner
from distrl.components.evaluator import Evaluator
from distrl.envs import is_atari, is_minatar, make_env
from distrl.errors import ConfigError
from distrl.nets.dpg import DPGActor, DPGCritic, dpg_pair
from distrl.nets.normalization import ObsNorm
from distrl.nets.precision import use_bf16
from distrl.replay import FifoRemover, PrioritizedRemover, PrioritizedSampler, ReplayTable, UniformSampler


def needs_continuous_actions(env_id: str, space: str) -> ConfigError:
    return ConfigError(f"apex-dpg needs a continuous (Box) action space, but {env_id} has {space}: use e.g. "
                       "Pendulum-v1 or HalfCheetah-v5, or `distrl train apex` for discrete actions")


@dataclass(frozen=True)
class ContinuousEnv:
    """What Ape-X DPG learns of its env before anything starts: shapes and the action bounds."""

    obs_shape: tuple[int, ...]
    obs_dim: int
    action_dim: int
    low: np.ndarray
    high: np.ndarray


class ApexDPG:
    """Its config is ApexDPGConfig."""

    def __init__(self, cfg: ApexDPGConfig):
        self.cfg = cfg
        if is_atari(cfg.env) or is_minatar(cfg.env):  # discrete by the id: refused before the emulator's banner
            raise needs_continuous_actions(cfg.env, "Discrete")
        probe = make_env(cfg.env, "eval")
        try:
            space, obs_space = probe.action_space, probe.observation_space
        finally:
            probe.close()
        self.spaces = (obs_space, space)
        if not isinstance(space, spaces.Box):
            raise needs_continuous_actions(cfg.env, type(space).__name__)
        obs_shape = observation_shape(obs_space, cfg.env)
        self.env = ContinuousEnv(obs_shape, int(np.prod(obs_shape)), int(np.prod(space.shape)),
                                 space.low.reshape(-1), space.high.reshape(-1))
        set_torch_threads(cfg.torch_threads, obs_shape)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net", "target_noise"))
        if cfg.net.critic_action_layer >= len(cfg.net.critic_hidden):
            raise ConfigError(f"net.critic_action_layer={cfg.net.critic_action_layer} names no hidden layer of "
                              f"net.critic_hidden={tuple(cfg.net.critic_hidden)}: use 0 to "
                              f"{len(cfg.net.critic_hidden) - 1} (0: the action joins the observation at the input)")
        if cfg.net.obs_norm and cfg.net.factory:
            raise ConfigError("net.obs_norm normalises distrl's own networks, not a net.factory's: drop one of "
                              "the two, or normalise inside your factory's networks (distrl.nets.ObsNorm)")
        user_network(cfg, self.spaces, "actor_critic")  # a user's networks are checked before anything starts

    def topology(self) -> Topology:
        """Ape-X's; one noise scale for every actor, so no greediest one to follow."""
        return replay_fed(self, self.replay())

    def replay(self) -> ReplaySpec:
        """Uniform or prioritized sampling; past capacity, low priorities out first, or the oldest. Nothing
        compressed: state vectors."""
        r = self.cfg.replay
        sampler = UniformSampler if r.sampling == "uniform" else partial(PrioritizedSampler, r.alpha, r.beta)
        remover = FifoRemover if r.eviction == "fifo" else partial(PrioritizedRemover, alpha_evict=r.alpha_evict)
        return replay_spec(self.cfg, sampler, self.seeds["replay"], remover=remover)

    def make_replay(self) -> ReplayTable:
        return self.replay().table()

    def _actor_critic(self) -> tuple[nn.Module, nn.Module]:
        torch.manual_seed(self.seeds["net"])
        if (pair := user_network(self.cfg, self.spaces, "actor_critic")) is not None:
            return cast(tuple[nn.Module, nn.Module], pair)
        e = self.env
        norm = ObsNorm(e.obs_dim) if self.cfg.net.obs_norm else None  # one, shared by actor and critic
        return (DPGActor(e.obs_dim, e.action_dim, e.low, e.high, self.cfg.net.actor_hidden,
                         self.cfg.net.activation, norm), self._critic(norm))

    def _critic(self, norm: ObsNorm | None = None) -> nn.Module:
        n = self.cfg.net
        e = self.env
        return DPGCritic(e.obs_dim, e.action_dim, n.critic_hidden, n.activation, n.critic_action_layer, norm)

    def _second_critic(self) -> nn.Module:
        """TD3's twin, drawn after the actor and critic from the same seed."""
        if (pair := user_network(self.cfg, self.spaces, "actor_critic")) is not None:
            return cast(nn.Module, pair[1])
        return self._critic()

    def make_net(self) -> nn.ModuleDict:
        """Actor and critic as one module: what the learner publishes and actors and evaluators load."""
        return dpg_pair(*self._actor_critic())

    def make_learner(self, device: str = "cpu") -> DPGLearner:
        le = self.cfg.learner
        actor, critic = self._actor_critic()  # a second critic is drawn after them, from the same seed
        critic2 = self._second_critic() if le.twin_critics else None
        return DPGLearner(actor, critic, lr=le.lr, actor_lr=le.actor_lr, target_update=le.target_update,
                          actor_grad_clip=le.actor_grad_clip, tau=le.tau, critic2=critic2, target_noise=le.target_noise,
                          target_noise_clip=le.target_noise_clip, policy_delay=le.policy_delay,
                          low=self.env.low, high=self.env.high, seed=self.seeds["target_noise"], device=device,
                          fused=le.fused_adam, bf16=use_bf16(le.bf16, device))

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> NoisyActor:
        cfg, seed = self.cfg, self.seeds.workers[index]

        def env_fn(j: int) -> gym.Env:
            return make_env(cfg.env, "train", seed=seed * 1000 + j)

        return NoisyActor(env_fn, *self._actor_critic(), cfg.actor.envs_per_actor, sink=sink, source=source,
                          n_step=cfg.learner.n_step, gamma=cfg.learner.gamma, flush_size=cfg.actor.flush_size,
                          pull_every=cfg.actor.pull_every, sigma=cfg.actor.sigma,
                          random_frames=cfg.actor.random_frames, seed=seed + 1)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        """The noiseless deterministic policy (the paper's evaluation)."""
        return Evaluator.for_run(self.cfg, self.make_net(), self.seeds["evaluator"], episodes, epsilon=0.0,
                                 policy="deterministic")

    def policy_params(self, run_dir: Path,
                      checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        return learner_policy(self, run_dir, checkpoint)
