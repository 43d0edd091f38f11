"""The acting component: steps environments, builds n-step transitions, sends them in batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.dqn import nstep_td_priorities
from distrl.contracts import ParameterSource, Sink
from distrl.envs.make import EnvList
from distrl.nets.precision import bf16_autocast, use_bf16
from distrl.replay.adder import NStepAdder


def apex_epsilons(num: int, base: float = 0.4, alpha: float = 7.0) -> list[float]:
    """eps_i = base^(1 + alpha * i / (N - 1)), i = 0..N-1 (Ape-X, sec. 4.1); one actor gets `base`."""
    if num == 1:
        return [base]
    return [base ** (1 + alpha * i / (num - 1)) for i in range(num)]


class NStepActor:
    """What Ape-X-shaped actors share: envs with one n-step adder each, transitions sent in batches
    of `flush_size` with the priorities the subclass computes, pulls every `pull_every` frames,
    counters. Subclasses pick the actions (`_step`) and the priorities (`priorities`); a subclass's
    __init__ ends with `self.pull()`."""

    action_dtype: type = np.int64

    def __init__(self, make_env: Callable[[int], Any], num_envs: int, net: nn.Module, *, sink: Sink,
                 source: ParameterSource, n_step: int, gamma: float, flush_size: int, pull_every: int,
                 frame_skip: int = 1, seed: int = 0, watch_env: int | None = None,
                 make_adder: Callable[[], Any] | None = None, envs: Any = None):
        """`watch_env`: an env whose episode returns are also kept apart (Ape-X: the lowest epsilon's).
        `make_adder`: each env's adder (default: n-step transitions; R2D2: sequences). `envs`: the envs as a
        group that steps them all at once (envs/atari_vector.py), in place of make_env's, one by one."""
        self.envs = envs if envs is not None else EnvList(make_env(j) for j in range(num_envs))
        self.net = net.eval()
        self.sink, self.source = sink, source
        self.adders: list[Any] = [(make_adder or (lambda: NStepAdder(n_step, gamma)))() for _ in range(len(self.envs))]
        self.flush_size, self.pull_every, self.frame_skip = flush_size, pull_every, frame_skip
        self.rng = np.random.default_rng(seed)
        self.obs = self.envs.reset_each()  # make_env(j) seeds its env
        self._ready: list[dict[str, Any]] = []
        self.frames = self.steps = self.pulls = self.sent = self.episodes = 0
        self.param_version = -1
        self._frames_at_pull = 0
        self.returns: list[float] = []  # finished episodes' unclipped returns, drained by the runtime
        self.watch_env = watch_env
        self.watched_returns: list[float] = []

    def pull(self) -> None:
        """Load the source's latest parameters; a source with nothing new returns None."""
        self._frames_at_pull = self.frames
        pulled = self.source.latest()
        if pulled is None:
            return
        params, self.param_version = pulled
        self.net.load_state_dict(params)
        self.pulls += 1
        self._loaded()

    def _loaded(self) -> None:
        """Called after new parameters were loaded."""

    def run(self, steps: int) -> None:
        """Take `steps` steps in every env; flushes and pulls happen along the way."""
        for _ in range(steps):
            self._step()

    def _step(self) -> None:
        raise NotImplementedError

    def _end_episode(self, j: int, info: dict[str, Any], start: np.ndarray | None = None) -> None:
        """Count env j's finished episode and start the next (`start`: its first observation, where the envs
        were stepped as a group and started it again already)."""
        self.episodes += 1
        if "episode" in info:
            self.returns.append(float(info["episode"]["r"]))
            if j == self.watch_env:
                self.watched_returns.append(self.returns[-1])
        self.adders[j].reset()
        self.obs[j] = self.envs[j].reset()[0] if start is None else start

    def _after_step(self) -> None:
        self.steps += len(self.envs)
        self.frames += len(self.envs) * self.frame_skip
        if len(self._ready) >= self.flush_size:
            self.flush()
        if self.frames - self._frames_at_pull >= self.pull_every:
            self.pull()

    def priorities(self, batch: dict[str, np.ndarray], ready: list[dict[str, Any]]) -> np.ndarray:
        raise NotImplementedError

    def flush(self) -> None:
        """Send the buffered transitions in one batch with their |n-step TD error| priorities."""
        if not self._ready:
            return
        ready, self._ready = self._ready, []
        batch = {
            "obs": np.stack([t["obs"] for t in ready]),
            "action": np.asarray([t["action"] for t in ready], dtype=self.action_dtype),
            "reward": np.asarray([t["reward"] for t in ready], dtype=np.float32),
            "discount": np.asarray([t["discount"] for t in ready], dtype=np.float32),
            "next_obs": np.stack([t["next_obs"] for t in ready]),
        }
        self.sink.add(batch, self.priorities(batch, ready))
        self.sent += len(ready)

    def drain_returns(self) -> list[float]:
        out, self.returns = self.returns, []
        return out

    def drain_watched_returns(self) -> list[float]:
        out, self.watched_returns = self.watched_returns, []
        return out

    def counters(self) -> dict[str, float]:
        return {"frames": self.frames, "steps": self.steps, "episodes": self.episodes,
                "param_pulls": self.pulls, "transitions_sent": self.sent}

    def close(self) -> None:
        self.envs.close()


class Actor(NStepActor):
    """Epsilon-greedy acting over a local copy of a Q-network, for Ape-X DQN.

    Each env has its own epsilon and n-step adder; one batched forward pass serves all envs. The
    Q-values computed to act are kept and reused for the initial priorities, as in Ape-X
    (appendix F): q(s_t) comes from the step that acted in s_t, q(s_{t+k}) from the next one."""

    def __init__(self, make_env: Callable[[int], Any], net: nn.Module, epsilons: Sequence[float], *,
                 sink: Sink, source: ParameterSource, n_step: int, gamma: float, flush_size: int,
                 pull_every: int, frame_skip: int = 1, seed: int = 0,
                 epsilon_schedule: Callable[[int], float | np.ndarray] | None = None,
                 watch_env: int | None = None, envs: Any = None, bf16: bool = False):
        """`epsilon_schedule(version)`, if given, sets the envs' epsilons (one for all, or one each) from
        the version of the parameters pulled (Gorila anneals over global parameter-server updates, Ape-X's
        warm-up over learner updates). `bf16` (actor.bf16) acts in bfloat16 autocast where the device
        computes it; the q-values, and so the priorities, come out of float32 output layers."""
        super().__init__(make_env, len(epsilons), net, sink=sink, source=source, n_step=n_step, gamma=gamma,
                         flush_size=flush_size, pull_every=pull_every, frame_skip=frame_skip, seed=seed,
                         watch_env=watch_env, envs=envs)
        self.epsilons = np.asarray(epsilons, dtype=np.float64)
        self.epsilon_schedule = epsilon_schedule
        self.bf16_asked = bf16
        self.place("cpu")
        # transitions awaiting q(s_{t+k})
        self._waiting: list[list[dict[str, Any]]] = [[] for _ in range(len(self.envs))]
        self._loaded()  # the schedule's epsilons before any parameters arrive (version -1)
        self.pull()

    def _loaded(self) -> None:
        if self.epsilon_schedule is not None:
            self.epsilons[:] = self.epsilon_schedule(self.param_version)

    def place(self, device: str | torch.device) -> None:
        """Run the forward pass on `device` (ray.actor_gpus: a share of a GPU); parameters pulled are copied there."""
        self.device = torch.device(device)
        self.net.to(self.device)
        self.bf16 = use_bf16(self.bf16_asked, self.device, option="actor.bf16")

    @torch.no_grad()
    def _q_values(self, obs: Sequence[np.ndarray]) -> np.ndarray:
        with bf16_autocast(self.device, self.bf16):
            q = self.net(torch.as_tensor(np.stack(obs)).to(self.device))
        return cast(np.ndarray, q.float().cpu().numpy())

    def _step(self) -> None:
        q = self._q_values(self.obs)
        greedy = q.argmax(axis=1)
        explore = self.rng.random(len(self.envs)) < self.epsilons
        actions = [int(self.rng.integers(q.shape[1])) if explore[j] else int(greedy[j]) for j in range(len(self.envs))]
        results, starts = self.envs.step_each(actions)
        for j, (action, (next_obs, reward, terminated, truncated, info)) in enumerate(zip(actions, results)):
            for t in self._waiting[j]:
                t["next_q"] = q[j]
            self._ready += self._waiting[j]
            self._waiting[j] = []
            # A lost life ends the bootstrap (DQN's training protocol) but not the game.
            done_for_learning = bool(terminated or info.get("life_loss", False))
            out = self.adders[j].add(self.obs[j], action, reward, next_obs, done_for_learning, truncated, q[j])
            if done_for_learning:
                for t in out:
                    t["next_q"] = np.zeros_like(q[j])
                self._ready += out
                self.adders[j].reset()
            elif truncated:
                next_q = self._q_values([next_obs])[0]
                for t in out:
                    t["next_q"] = next_q
                self._ready += out
            else:
                self._waiting[j] = out
            if terminated or truncated:
                self._end_episode(j, info, starts[j])
            else:
                self.obs[j] = next_obs
        self._after_step()

    def priorities(self, batch: dict[str, np.ndarray], ready: list[dict[str, Any]]) -> np.ndarray:
        """From the q-values kept while acting: q(s_t) and q(s_{t+k})."""
        return nstep_td_priorities(np.stack([t["extra"] for t in ready]), batch["action"], batch["reward"],
                                   batch["discount"], np.stack([t["next_q"] for t in ready]))
