"""The Ape-X DPG acting component (Horgan et al. 2018, appendix D): noisy deterministic policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from distrl.components.actor import ParameterSource, Sink
from distrl.nets.dpg import dpg_pair
from distrl.replay.adder import NStepAdder


class NoisyActor:
    """Acts with a local copy of pi(s) plus Gaussian noise, for Ape-X DPG.

    The noise is N(0, sigma^2) on each action dimension with sigma in action units (absolute, not
    scaled by the range: the paper's "sigma = 0.3 on each action"), then the action is clipped to
    the env's action-space bounds. n-step transitions are built per env as in `Actor`; at a true
    terminal the adder gives discount 0, at a truncation gamma^k with the real final observation,
    so the bootstrap from it stays. Initial priorities |R + d q(s', pi(s')) - q(s, a)| come from
    the local actor/critic pair in one batched pass at flush time: unlike DQN, acting computes no
    q-values to reuse (pi alone picks the action), so there is nothing to carry along."""

    def __init__(self, make_env: Callable[[int], Any], actor: nn.Module, critic: nn.Module, num_envs: int = 1, *,
                 sink: Sink, source: ParameterSource, n_step: int, gamma: float, flush_size: int,
                 pull_every: int, sigma: float = 0.3, seed: int = 0):
        self.envs = [make_env(j) for j in range(num_envs)]
        self.nets = dpg_pair(actor, critic).eval()
        space = self.envs[0].action_space
        self.low = np.asarray(space.low, dtype=np.float32)
        self.high = np.asarray(space.high, dtype=np.float32)
        self.sigma = sigma
        self.sink, self.source = sink, source
        self.adders = [NStepAdder(n_step, gamma) for _ in self.envs]
        self.flush_size, self.pull_every = flush_size, pull_every
        self.rng = np.random.default_rng(seed)
        self.obs = [env.reset()[0] for env in self.envs]  # make_env(j) seeds its env, as for Actor
        self._ready: list[dict] = []
        self.frames = self.steps = self.pulls = self.sent = self.episodes = 0
        self.param_version = -1
        self._frames_at_pull = 0
        self.returns: list[float] = []  # finished episodes' returns, drained by the runtime
        self.pull()

    def pull(self) -> None:
        """Load the source's latest actor and critic; a source with nothing new returns None."""
        self._frames_at_pull = self.frames
        pulled = self.source.pull()
        if pulled is None:
            return
        params, self.param_version = pulled
        self.nets.load_state_dict(params)
        self.pulls += 1

    def _obs_tensor(self, obs) -> torch.Tensor:
        return torch.as_tensor(np.stack(obs), dtype=torch.float32)

    @torch.no_grad()
    def act(self, obs) -> np.ndarray:
        """Noisy, clipped actions for a list of observations: float32 [len(obs), action_dim]."""
        mean = self.nets["actor"](self._obs_tensor(obs)).numpy()
        noisy = mean + self.rng.normal(0.0, self.sigma, size=mean.shape)
        return np.clip(noisy, self.low, self.high).astype(np.float32)

    def run(self, steps: int) -> None:
        """Take `steps` steps in every env; flushes and pulls happen along the way."""
        for _ in range(steps):
            self._step()

    def _step(self) -> None:
        actions = self.act(self.obs)
        for j, env in enumerate(self.envs):
            next_obs, reward, terminated, truncated, info = env.step(actions[j])
            self._ready += self.adders[j].add(self.obs[j], actions[j], reward, next_obs,
                                              bool(terminated), bool(truncated))
            if terminated or truncated:
                self.episodes += 1
                if "episode" in info:
                    self.returns.append(float(info["episode"]["r"]))
                self.adders[j].reset()
                self.obs[j], _ = env.reset()
            else:
                self.obs[j] = next_obs
        self.steps += len(self.envs)
        self.frames += len(self.envs)
        if len(self._ready) >= self.flush_size:
            self.flush()
        if self.frames - self._frames_at_pull >= self.pull_every:
            self.pull()

    @torch.no_grad()
    def priorities(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """|reward + discount * q(s', pi(s')) - q(s, a)| with the local networks."""
        actor, critic = self.nets["actor"], self.nets["critic"]
        obs, next_obs = (torch.as_tensor(batch[k], dtype=torch.float32) for k in ("obs", "next_obs"))
        next_q = critic(next_obs, actor(next_obs))
        target = torch.as_tensor(batch["reward"]) + torch.as_tensor(batch["discount"]) * next_q
        return (target - critic(obs, torch.as_tensor(batch["action"]))).abs().numpy()

    def flush(self) -> None:
        """Send the buffered transitions in one batch with their |n-step TD error| priorities."""
        if not self._ready:
            return
        ready, self._ready = self._ready, []
        batch = {
            "obs": np.stack([t["obs"] for t in ready]),
            "action": np.stack([t["action"] for t in ready]).astype(np.float32),
            "reward": np.asarray([t["reward"] for t in ready], dtype=np.float32),
            "discount": np.asarray([t["discount"] for t in ready], dtype=np.float32),
            "next_obs": np.stack([t["next_obs"] for t in ready]),
        }
        self.sink.add(batch, self.priorities(batch))
        self.sent += len(ready)

    def drain_returns(self) -> list[float]:
        out, self.returns = self.returns, []
        return out

    def counters(self) -> dict[str, float]:
        return {"frames": self.frames, "steps": self.steps, "episodes": self.episodes,
                "param_pulls": self.pulls, "transitions_sent": self.sent}

    def close(self) -> None:
        for env in self.envs:
            env.close()
