"""The learning component: owns online and target networks and the optimizer."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any, Protocol, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.dqn import double_q_targets, q_targets, td_loss
from distrl.algos.rmsprop import RMSProp
from distrl.nets.precision import bf16_autocast
from distrl.params.param_server import unflatten_into


class OptimizerConfig(Protocol):
    """The optimizer's settings, as config.LearnerConfig has them."""

    @property
    def optimizer(self) -> str: ...
    @property
    def lr(self) -> float: ...
    @property
    def rms_decay(self) -> float: ...
    @property
    def rms_eps(self) -> float: ...
    @property
    def adam_eps(self) -> float: ...
    @property
    def fused_adam(self) -> bool: ...


class QLearnerConfig(Protocol):
    """What a DQNLearner reads of its config (LearnerConfig's fields; Gorila's learner section has them too)."""

    @property
    def grad_clip(self) -> float: ...
    @property
    def target_update(self) -> int: ...
    @property
    def double_q(self) -> bool: ...
    @property
    def loss(self) -> str: ...


def make_optimizer(params: Iterable[torch.nn.Parameter], cfg: OptimizerConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "rmsprop_centered":
        # Ape-X appendix C: centered RMSProp, decay 0.95, eps 1.5e-7, no momentum, as TensorFlow
        # defines it (eps inside the square root, mean square starting at 1).
        return RMSProp(params, lr=cfg.lr, decay=cfg.rms_decay, eps=cfg.rms_eps, centered=True, initial_ms=1.0)
    return torch.optim.Adam(params, lr=cfg.lr, eps=cfg.adam_eps, fused=cfg.fused_adam or None)


KERNEL_KEYS = ("fused", "foreach")  # how torch runs a group's update, not what the update is


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """A checkpoint's optimizer state under this run's kernels: torch restores each group's saved `fused` and
    `foreach` too, so a run resumed with learner.fused_adam would silently keep the kernel it was saved with.
    They are set before the load, which places the step counts where the kernel wants them."""
    kernels = [{k: g[k] for k in KERNEL_KEYS if k in g} for g in optimizer.param_groups]
    groups = [{**saved, **mine} for saved, mine in zip(state["param_groups"], kernels)]
    optimizer.load_state_dict({**state, "param_groups": groups})


class DQNLearner:
    """n-step (double) Q-learning on prioritized batches; the parameter source for Ape-X actors. With `bf16`
    the networks' hidden layers run in bfloat16 autocast (1.8x the float32 step on Pong, 1.6x on MinAtar, on a
    CPU with bf16 units: bench/dqn_learner_step.py); their output layers, the targets and the loss stay float32.
    With `channels_last` the convolution weights are NHWC, oneDNN's layout: a forward and backward pass on Pong
    made 11 layout reorders instead of 27 (oneDNN's verbose log, an AMX CPU). The same numbers: the
    parameters' strides differ, not their values."""

    def __init__(self, net: nn.Module, cfg: QLearnerConfig, device: str = "cpu", bf16: bool = False,
                 applies_gradients: bool = True, channels_last: bool = False):
        self.cfg, self.device, self.bf16 = cfg, torch.device(device), bf16
        self.online = net.to(self.device)
        if channels_last:  # in place; torch's type stubs for Module.to leave memory_format out
            cast(Any, self.online).to(memory_format=torch.channels_last)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        # None where a parameter server applies the gradients (Gorila: its shards hold the optimizer, and its
        # config the settings); a learner that applies them has a LearnerConfig's
        self.optimizer = make_optimizer(self.online.parameters(), cast(OptimizerConfig, cfg)) \
            if applies_gradients else None
        self.updates = 0
        self.samples = 0

    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.device)

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
        """One gradient step; returns metrics and the new priorities |G - q(s, a)| of the batch."""
        loss, td, q = self._loss(batch, weights)
        assert self.optimizer is not None  # a learner that applies its gradients
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.online.parameters(), self.cfg.grad_clip or math.inf)
        self.optimizer.step()
        self.updates += 1
        self.samples += len(td)
        if self.updates % self.cfg.target_update == 0:
            self.target.load_state_dict(self.online.state_dict())
        metrics = {"loss": loss.item(), "grad_norm": grad_norm.item(), "q_mean": q.mean().item()}
        return metrics, td.abs().cpu().numpy()

    def grads(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        """The clipped gradient as one flat vector, without applying it (Gorila: the parameter
        server applies it); returns (gradient, loss, |TD errors|)."""
        loss, td, _ = self._loss(batch, weights)
        self.online.zero_grad(set_to_none=False)
        loss.backward()
        nn.utils.clip_grad_norm_(self.online.parameters(), self.cfg.grad_clip or math.inf)
        self.samples += len(td)
        flat = torch.cat([cast(torch.Tensor, p.grad).reshape(-1) for p in self.online.parameters()])
        return flat.cpu().numpy(), loss.item(), td.abs().cpu().numpy()

    def _loss(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        obs, next_obs = self._tensor(batch["obs"]), self._tensor(batch["next_obs"])
        reward, discount = self._tensor(batch["reward"]).float(), self._tensor(batch["discount"]).float()
        with bf16_autocast(self.device, self.bf16):  # the targets' own ops (argmax, gather, sums) stay float32
            q = self.online(obs).float()
            with torch.no_grad():  # s' only picks actions and bootstraps: no backward through it
                q_next_target = self.target(next_obs).float()
                if self.cfg.double_q:
                    target = double_q_targets(reward, discount, self.online(next_obs).float(), q_next_target)
                else:
                    target = q_targets(reward, discount, q_next_target)
        loss, td = td_loss(q, self._tensor(batch["action"]), target, self._tensor(weights).float(),
                           self.cfg.loss)
        return loss, td, q

    def latest(self) -> tuple[dict[str, torch.Tensor], int]:
        """Current online parameters (CPU) and their version, the update count."""
        return {k: v.detach().cpu() for k, v in self.online.state_dict().items()}, self.updates

    def state_dict(self) -> dict[str, Any]:
        return {"online": self.online.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict() if self.optimizer else {},
                "updates": self.updates, "samples": self.samples}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        if self.optimizer:
            load_optimizer_state(self.optimizer, state["optimizer"])
        self.updates, self.samples = int(state["updates"]), int(state["samples"])

    def counters(self) -> dict[str, float]:
        return {"updates": self.updates, "samples": self.samples}


class LossOutlierFilter:
    """Gorila's second safeguard: keep a running mean and standard deviation of |loss| and drop a
    gradient whose |loss| exceeds mean + k std. The paper says "several" standard deviations
    without a number; k = 3 is distrl's default. Statistics start after `warmup` losses and include
    every loss seen, dropped ones too, so a real shift in the loss scale is followed, not locked out."""

    def __init__(self, k: float = 3.0, warmup: int = 100):
        self.k, self.warmup = k, warmup
        self.count, self.mean, self._m2 = 0, 0.0, 0.0
        self.dropped = 0

    @property
    def std(self) -> float:
        return (self._m2 / (self.count - 1)) ** 0.5 if self.count > 1 else 0.0

    def accept(self, loss: float) -> bool:
        value = abs(float(loss))
        ok = self.count < self.warmup or value <= self.mean + self.k * self.std
        self.count += 1  # Welford's running update
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)
        if not ok:
            self.dropped += 1
        return ok



class ParamServerLearner:
    """Gorila's learner: computes DQN gradients and pushes them to a parameter server, never
    applying them itself. It pulls every `pull_every` steps (K; when a push is due too, push and
    pull go in one round trip), and refreshes its target network from the pulled parameters
    whenever the global update count (counted at the server: the minimum shard version) enters a
    new multiple of `target_update`, however few steps it took itself. A gradient whose loss is an
    outlier is dropped before it is sent."""

    def __init__(self, learner: DQNLearner, ps: Any, *, target_update: int, pull_every: int = 1,
                 outlier: LossOutlierFilter | None = None):
        self.learner, self.ps = learner, ps
        self.target_update, self.pull_every = target_update, pull_every
        self.outlier = outlier or LossOutlierFilter()
        self.steps = self.pushes = self.pulls = self.target_refreshes = 0
        self.global_updates = 0
        self._period = -1
        self._versions: np.ndarray | None = None

    def pull(self) -> None:
        self._load(*self.ps.pull())

    def _load(self, flat: np.ndarray, versions: np.ndarray) -> None:
        unflatten_into(self.learner.online, flat)
        self._versions = versions
        self.pulls += 1
        self.global_updates = int(versions.min())
        period = self.global_updates // self.target_update
        if period > self._period:
            unflatten_into(self.learner.target, flat)
            self._period = period
            self.target_refreshes += 1

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> dict[str, float]:
        """One gradient on `batch`, pushed with the versions it was computed on unless its loss is an outlier."""
        if self._versions is None:
            self.pull()
        grad, loss, _ = self.learner.grads(batch, weights)
        self.steps += 1
        pull_now = self.steps % self.pull_every == 0
        pushed = self.outlier.accept(loss)
        if pushed and pull_now:
            self._load(*self.ps.push_pull(grad, self._versions))
        elif pushed:
            self.ps.push(grad, self._versions, wait=False)  # stale drops are counted at the shards
        elif pull_now:
            self.pull()
        self.pushes += pushed
        return {"loss": loss, "pushed": float(pushed)}

    def params(self) -> tuple[dict[str, torch.Tensor], int] | None:
        """The parameters of the last pull and their global version (None before the first)."""
        if self._versions is None:
            return None
        return self.learner.online.state_dict(), self.global_updates

    def counters(self) -> dict[str, float]:
        return {"steps": self.steps, "pushes": self.pushes, "pulls": self.pulls,
                "dropped_outliers": self.outlier.dropped, "target_refreshes": self.target_refreshes,
                "samples": self.learner.samples}
