"""The Ape-X DPG acting component (Horgan et al. 2018, appendix D): noisy deterministic policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from distrl.components.actor import NStepActor, ParameterSource, Sink
from distrl.nets.dpg import dpg_pair


class NoisyActor(NStepActor):
    """Acts with a local copy of pi(s) plus Gaussian noise, for Ape-X DPG.

    The noise is N(0, sigma^2) on each action dimension with sigma in action units (absolute, not
    scaled by the range: the paper's "sigma = 0.3 on each action"), then the action is clipped to
    the env's action-space bounds. n-step transitions are built per env as in `Actor`; at a true
    terminal the adder gives discount 0, at a truncation gamma^k with the real final observation,
    so the bootstrap from it stays. Initial priorities |R + d q(s', pi(s')) - q(s, a)| come from
    the local actor/critic pair in one batched pass at flush time: unlike DQN, acting computes no
    q-values to reuse (pi alone picks the action), so there is nothing to carry along.

    `random_frames` > 0 starts with that many frames of uniformly random actions (TD3's start, SB3's
    learning_starts): the replay fills with broad data before the untrained policy narrows it. They are
    counted by this actor, so a restarted actor takes them again."""

    action_dtype = np.float32

    def __init__(self, make_env: Callable[[int], Any], actor: nn.Module, critic: nn.Module, num_envs: int = 1, *,
                 sink: Sink, source: ParameterSource, n_step: int, gamma: float, flush_size: int,
                 pull_every: int, sigma: float = 0.3, random_frames: int = 0, seed: int = 0):
        super().__init__(make_env, num_envs, dpg_pair(actor, critic), sink=sink, source=source, n_step=n_step,
                         gamma=gamma, flush_size=flush_size, pull_every=pull_every, seed=seed)
        space = self.envs[0].action_space
        self.low = np.asarray(space.low, dtype=np.float32)
        self.high = np.asarray(space.high, dtype=np.float32)
        self.sigma, self.random_frames = sigma, random_frames
        self.pull()

    def _obs_tensor(self, obs: list[np.ndarray]) -> torch.Tensor:
        return torch.as_tensor(np.stack(obs), dtype=torch.float32)

    @torch.no_grad()
    def act(self, obs: list[np.ndarray]) -> np.ndarray:
        """Noisy, clipped actions for a list of observations: float32 [len(obs), action_dim]."""
        if self.frames < self.random_frames:
            return self.rng.uniform(self.low, self.high, size=(len(obs), self.low.size)).astype(np.float32)
        mean = cast(nn.ModuleDict, self.net)["actor"](self._obs_tensor(obs)).numpy()  # dpg_pair's
        noisy = mean + self.rng.normal(0.0, self.sigma, size=mean.shape)
        return cast(np.ndarray, np.clip(noisy, self.low, self.high).astype(np.float32))

    def _step(self) -> None:
        actions = self.act(self.obs)
        for j, env in enumerate(self.envs):
            next_obs, reward, terminated, truncated, info = env.step(actions[j])
            self._ready += self.adders[j].add(self.obs[j], actions[j], reward, next_obs,
                                              bool(terminated), bool(truncated))
            if terminated or truncated:
                self._end_episode(j, info)
            else:
                self.obs[j] = next_obs
        self._after_step()

    @torch.no_grad()
    def priorities(self, batch: dict[str, np.ndarray], ready: list[dict[str, Any]] | None = None) -> np.ndarray:
        """|reward + discount * q(s', pi(s')) - q(s, a)| with the local networks."""
        pair = cast(nn.ModuleDict, self.net)  # dpg_pair's
        actor, critic = pair["actor"], pair["critic"]
        obs, next_obs = (torch.as_tensor(batch[k], dtype=torch.float32) for k in ("obs", "next_obs"))
        next_q = critic(next_obs, actor(next_obs))
        target = torch.as_tensor(batch["reward"]) + torch.as_tensor(batch["discount"]) * next_q
        return cast(np.ndarray, (target - critic(obs, torch.as_tensor(batch["action"]))).abs().numpy())
