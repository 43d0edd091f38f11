"""Ape-X DPG (Horgan et al. 2018, appendix D) as a wiring: Ape-X's shape (N actors, one central
prioritized replay, one prefetching learner that is the actors' parameter source) with a
deterministic actor and a critic. Actors add Gaussian noise (sigma 0.3) and compute the initial
priorities with the critic; the replay keeps its capacity by prioritized eviction (alpha_evict
-0.4), not FIFO. The Ape-X runtimes run it unchanged: only the parts differ.

This module says what to create and how the parts connect; a runtime (inline, ray) says where."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from distrl.architectures.apex_dpg.config import ApexDPGConfig
from distrl.architectures.common import Seeds, set_torch_threads, user_network
from distrl.architectures.replay_fed import ReplayFed
from distrl.components.actor import ParameterSource, Sink
from distrl.components.dpg_actor import NoisyActor
from distrl.components.dpg_learner import DPGLearner
from distrl.components.evaluator import Evaluator
from distrl.envs import is_atari, is_minatar, make_env
from distrl.errors import ConfigError
from distrl.nets.dpg import DPGActor, DPGCritic, dpg_pair
from distrl.nets.normalization import ObsNorm
from distrl.nets.precision import use_bf16
from distrl.replay import FifoRemover, PrioritizedRemover, PrioritizedSampler, UniformSampler
from distrl.replay.removers import Remover
from distrl.replay.samplers import Sampler


def needs_continuous_actions(env_id: str, space: str) -> ConfigError:
    return ConfigError(f"apex-dpg needs a continuous (Box) action space, but {env_id} has {space}: use e.g. "
                       "Pendulum-v1 or HalfCheetah-v5, or `distrl train apex` for discrete actions")


class ApexDPG(ReplayFed):
    architecture = "apex-dpg"
    watched_return = None  # one noise scale for every actor: no greediest one to follow

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
        self.obs_shape = tuple(obs_space.shape)
        self.obs_dim = int(np.prod(self.obs_shape))
        self.action_dim = int(np.prod(space.shape))
        self.low, self.high = space.low.reshape(-1), space.high.reshape(-1)
        self.atari, self.frame_skip = False, 1
        set_torch_threads(cfg.torch_threads, self.obs_shape)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "replay", "net", "target_noise"))
        if cfg.net.critic_action_layer >= len(cfg.net.critic_hidden):
            raise ConfigError(f"net.critic_action_layer={cfg.net.critic_action_layer} names no hidden layer of "
                              f"net.critic_hidden={tuple(cfg.net.critic_hidden)}: use 0 to "
                              f"{len(cfg.net.critic_hidden) - 1} (0: the action joins the observation at the input)")
        if cfg.net.obs_norm and cfg.net.factory:
            raise ConfigError("net.obs_norm normalises distrl's own networks, not a net.factory's: drop one of "
                              "the two, or normalise inside your factory's networks (distrl.nets.ObsNorm)")
        user_network(cfg, self.spaces, "actor_critic")  # a user's networks are checked before anything starts

    def _actor_critic(self) -> tuple[nn.Module, nn.Module]:
        torch.manual_seed(self.seeds["net"])
        if (pair := user_network(self.cfg, self.spaces, "actor_critic")) is not None:
            return pair
        norm = ObsNorm(self.obs_dim) if self.cfg.net.obs_norm else None  # one, shared by actor and critic
        return (DPGActor(self.obs_dim, self.action_dim, self.low, self.high, self.cfg.net.actor_hidden,
                         self.cfg.net.activation, norm), self._critic(norm))

    def _critic(self, norm: ObsNorm | None = None) -> nn.Module:
        n = self.cfg.net
        return DPGCritic(self.obs_dim, self.action_dim, n.critic_hidden, n.activation, n.critic_action_layer, norm)

    def _second_critic(self) -> nn.Module:
        """TD3's twin, drawn after the actor and critic from the same seed."""
        if (pair := user_network(self.cfg, self.spaces, "actor_critic")) is not None:
            return pair[1]
        return self._critic()

    def make_net(self) -> nn.ModuleDict:
        """Actor and critic as one module: what the learner publishes and actors and evaluators load."""
        return dpg_pair(*self._actor_critic())

    def replay_sampler(self) -> Sampler:
        r = self.cfg.replay
        return UniformSampler() if r.sampling == "uniform" else PrioritizedSampler(r.alpha, r.beta)

    def replay_remover(self) -> Remover:
        r = self.cfg.replay
        return FifoRemover() if r.eviction == "fifo" else PrioritizedRemover(alpha_evict=r.alpha_evict)

    def compressed(self) -> tuple[str, ...]:
        return ()  # state vectors: nothing to deflate

    def make_learner(self, device: str = "cpu") -> DPGLearner:
        le = self.cfg.learner
        actor, critic = self._actor_critic()  # a second critic is drawn after them, from the same seed
        critic2 = self._second_critic() if le.twin_critics else None
        return DPGLearner(actor, critic, lr=le.lr, actor_lr=le.actor_lr, target_update=le.target_update,
                          actor_grad_clip=le.actor_grad_clip, tau=le.tau, critic2=critic2, target_noise=le.target_noise,
                          target_noise_clip=le.target_noise_clip, policy_delay=le.policy_delay,
                          low=self.low, high=self.high, seed=self.seeds["target_noise"], device=device,
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
