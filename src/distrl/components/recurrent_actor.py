"""R2D2's acting component: epsilon-greedy over a recurrent Q-network, steps cut into sequences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.r2d2 import sequence_priorities, sequence_td_errors
from distrl.components.actor import NStepActor
from distrl.contracts import ParameterSource, Sink
from distrl.replay.sequence_adder import STEP_KEYS, SequenceAdder

if TYPE_CHECKING:
    from distrl.nets.recurrent_q import RecurrentQNetwork


class RecurrentActor(NStepActor):
    """Each env has its own epsilon (Ape-X's), its LSTM state (zeros at an episode's start) and its
    previous action and reward, fed back to the network; one batched forward pass serves all envs.
    Steps are cut into sequences (replay/sequence_adder.py) with the state before their first step, and
    sent in batches of `flush_size` sequences with priorities computed here, as Ape-X's actors do: the
    learner's rule (sequence_td_errors, the eta-mix) with this actor's network as both online and target.
    Rewards are the env's, unclipped: R2D2 rescales values instead."""

    def __init__(self, make_env: Callable[[int], Any], net: nn.Module, epsilons: Sequence[float], *,
                 sink: Sink, source: ParameterSource, burn_in: int, trace: int, period: int, n_step: int,
                 gamma: float, rescale_eps: float, priority_eta: float, flush_size: int, pull_every: int,
                 frame_skip: int = 1, seed: int = 0, watch_env: int | None = None):
        super().__init__(make_env, len(epsilons), net, sink=sink, source=source, n_step=n_step, gamma=gamma,
                         flush_size=flush_size, pull_every=pull_every, frame_skip=frame_skip, seed=seed,
                         watch_env=watch_env, make_adder=lambda: SequenceAdder(burn_in, trace, period))
        self.burn_in, self.gamma, self.n_step = burn_in, gamma, n_step
        self.rescale_eps, self.priority_eta = rescale_eps, priority_eta
        self.epsilons = np.asarray(epsilons, dtype=np.float64)
        self.state = cast("RecurrentQNetwork", net).initial_state(len(self.envs))
        self.prev_action = np.zeros(len(self.envs), np.int64)
        self.prev_reward = np.zeros(len(self.envs), np.float32)
        self.pull()

    def _step(self) -> None:
        obs = torch.as_tensor(np.stack(self.obs))[None]
        before = (self.state[0][0].numpy().copy(), self.state[1][0].numpy().copy())  # [E, H] each
        with torch.no_grad():
            q, state = self.net(obs, torch.as_tensor(self.prev_action)[None], torch.as_tensor(self.prev_reward)[None],
                                self.state)
        q = q[0].numpy()
        greedy = q.argmax(axis=1)
        explore = self.rng.random(len(self.envs)) < self.epsilons
        h, c = state[0].clone(), state[1].clone()
        for j, env in enumerate(self.envs):
            action = int(self.rng.integers(q.shape[1])) if explore[j] else int(greedy[j])
            next_obs, reward, terminated, truncated, info = env.step(action)
            self._ready += self.adders[j].add(
                self.obs[j], (before[0][j], before[1][j]), next_obs, bool(terminated or truncated),
                prev_action=float(self.prev_action[j]), prev_reward=float(self.prev_reward[j]), action=float(action),
                reward=float(reward), discount=0.0 if terminated else self.gamma)
            if terminated or truncated:
                self._end_episode(j, info)
                h[:, j], c[:, j] = 0.0, 0.0
                self.prev_action[j], self.prev_reward[j] = 0, 0.0
            else:
                self.obs[j] = next_obs
                self.prev_action[j], self.prev_reward[j] = action, reward
        self.state = (h, c)
        self._after_step()

    def flush(self) -> None:
        """Send the finished sequences in one batch with their priorities."""
        if not self._ready:
            return
        ready, self._ready = self._ready, []
        batch = {key: np.stack([s[key] for s in ready]) for key in ("obs", *STEP_KEYS, "mask")}
        batch["state_h"] = np.stack([s["state"][0] for s in ready])
        batch["state_c"] = np.stack([s["state"][1] for s in ready])
        self.sink.add(batch, self.priorities(batch, ready))
        self.sent += len(ready)

    @torch.no_grad()
    def priorities(self, batch: dict[str, np.ndarray], ready: list[dict[str, Any]]) -> np.ndarray:
        """The learner's priority rule on this actor's network (online and target alike)."""
        def time_major(key: str) -> torch.Tensor:
            return torch.as_tensor(batch[key]).transpose(0, 1)

        burn = self.burn_in
        obs, mask = time_major("obs"), time_major("mask")
        prev_action, prev_reward = time_major("prev_action"), time_major("prev_reward")
        action, reward = time_major("action"), time_major("reward")
        stored = (torch.as_tensor(batch["state_h"])[None], torch.as_tensor(batch["state_c"])[None])
        net = cast("RecurrentQNetwork", self.net)
        state = net.burn_in(obs[:burn], prev_action[:burn], prev_reward[:burn], stored, mask[:burn])
        q, _ = self.net(obs[burn:], torch.cat([prev_action[burn:], action[-1:]]),
                        torch.cat([prev_reward[burn:], reward[-1:]]), state)
        td = sequence_td_errors(q, q, action[burn:], reward[burn:], time_major("discount")[burn:], mask[burn:],
                                self.n_step, self.rescale_eps)
        return sequence_priorities(td, mask[burn:], self.priority_eta).numpy().astype(np.float64)
