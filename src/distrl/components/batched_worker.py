"""A BA3C worker (Adamski et al. 2018): n_sim environments acting through one batched forward pass.
Every t_max steps each env's steps become data points (state, action, n-step return); they queue
up, and a gradient takes the oldest `batch_size` of them and recomputes policy and value on them
with the current parameters (the A3C loss). The worker knows nothing of rounds or transport: the
runtime loads parameters into it and sends its gradients to the chief or the parameter server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.actor_critic import a3c_loss
from distrl.algos.q_learning import nstep_returns
from distrl.params.param_server import flat_grad, unflatten_into


class BatchedWorker:
    def __init__(self, make_env: Callable[[int], Any], n_sim: int, net: nn.Module, *, t_max: int = 5,
                 batch_size: int = 32, gamma: float = 0.99, entropy_beta: float = 0.01, value_coef: float = 0.5,
                 grad_clip: float = 40.0, reward_scale: float = 1.0, frame_skip: int = 1, seed: int = 0):
        self.envs = [make_env(i) for i in range(n_sim)]
        self.net, self.t_max, self.batch_size, self.gamma = net, t_max, batch_size, gamma
        self.entropy_beta, self.value_coef, self.grad_clip = entropy_beta, value_coef, grad_clip
        self.reward_scale, self.frame_skip = reward_scale, frame_skip
        self.obs = [env.reset(seed=seed + i)[0] for i, env in enumerate(self.envs)]
        torch.manual_seed(seed)  # action sampling
        self._states: list[np.ndarray] = []
        self._actions: list[np.ndarray] = []
        self._returns: list[np.ndarray] = []
        self._queued = 0
        self.frames = self.steps = self.episodes = self.gradients = self.data_points = 0
        self.returns: list[float] = []
        self.last_loss: dict[str, float] = {}

    def load(self, flat: np.ndarray) -> None:
        unflatten_into(self.net, flat)

    @torch.no_grad()
    def _values(self, obs: list[np.ndarray]) -> torch.Tensor:
        return cast(torch.Tensor, self.net(torch.as_tensor(np.stack(obs)))[1])

    @torch.no_grad()
    def _rollout(self) -> None:
        """t_max steps of every env; their n-step returns join the queue. An episode cut by a time
        limit (truncated, not terminated) bootstraps from V(final observation)."""
        T, N = self.t_max, len(self.envs)
        states = np.empty((T, N, *self.obs[0].shape), dtype=self.obs[0].dtype)
        actions = np.empty((T, N), dtype=np.int64)
        rewards, dones = np.zeros((T, N), dtype=np.float32), np.zeros((T, N), dtype=np.float32)
        cut: list[tuple[int, int, np.ndarray]] = []  # (t, i, final obs) of truncated episodes
        for t in range(T):
            states[t] = np.stack(self.obs)
            logits = self.net(torch.as_tensor(states[t]))[0]
            actions[t] = torch.distributions.Categorical(logits=logits).sample().numpy()
            for i, env in enumerate(self.envs):
                next_obs, reward, terminated, truncated, info = env.step(int(actions[t, i]))
                rewards[t, i] = reward * self.reward_scale
                dones[t, i] = float(terminated or info.get("life_loss", False))
                if truncated and not dones[t, i]:
                    cut.append((t, i, next_obs))
                if terminated or truncated:
                    self.episodes += 1
                    if "episode" in info:
                        self.returns.append(float(info["episode"]["r"]))
                    next_obs, _ = env.reset()
                self.obs[i] = next_obs
        self.steps += T * N
        self.frames += T * N * self.frame_skip
        if cut:  # r + gamma V(s_final), and no bootstrap across the reset that follows
            values = self._values([o for _, _, o in cut]).numpy()
            for (t, i, _), v in zip(cut, values):
                rewards[t, i] += self.gamma * v
                dones[t, i] = 1.0
        returns = nstep_returns(torch.from_numpy(rewards), torch.from_numpy(dones), self._values(self.obs),
                                self.gamma).numpy()
        self._states.append(states.reshape(T * N, *states.shape[2:]))
        self._actions.append(actions.reshape(-1))
        self._returns.append(returns.reshape(-1))
        self._queued += T * N

    def _take(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        states, actions, returns = (np.concatenate(x) for x in (self._states, self._actions, self._returns))
        self._states, self._actions, self._returns = [states[n:]], [actions[n:]], [returns[n:]]
        self._queued -= n
        return states[:n], actions[:n], returns[:n]

    def gradient(self) -> np.ndarray:
        """The A3C gradient on the oldest batch_size data points (acting first if too few are queued)."""
        while self._queued < self.batch_size:
            self._rollout()
        states, actions, returns = self._take(self.batch_size)
        logits, values = self.net(torch.as_tensor(states))[:2]
        loss, self.last_loss = a3c_loss(logits, torch.from_numpy(actions), torch.from_numpy(returns), values,
                                        self.entropy_beta, self.value_coef)
        self.net.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), self.grad_clip)
        self.gradients += 1
        self.data_points += self.batch_size
        return flat_grad(self.net)

    def drain_returns(self) -> list[float]:
        out, self.returns = self.returns, []
        return out

    def counters(self) -> dict[str, int]:
        return {"frames": self.frames, "steps": self.steps, "episodes": self.episodes, "gradients": self.gradients,
                "data_points": self.data_points}

    def close(self) -> None:
        for env in self.envs:
            env.close()
