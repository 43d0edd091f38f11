"""The learning component: owns online and target networks and the optimizer."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from distrl.algos.dqn import double_q_targets, q_targets, td_loss
from distrl.config import LearnerConfig


def make_optimizer(params, cfg: LearnerConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "rmsprop_centered":
        # Ape-X appendix C: centered RMSProp, decay 0.95, eps 1.5e-7, no momentum.
        return torch.optim.RMSprop(params, lr=cfg.lr, alpha=cfg.rms_decay, eps=cfg.rms_eps,
                                   centered=True, momentum=0.0)
    return torch.optim.Adam(params, lr=cfg.lr)


class DQNLearner:
    """n-step (double) Q-learning on prioritized batches; the parameter source for Ape-X actors."""

    def __init__(self, net: nn.Module, cfg: LearnerConfig, device: str = "cpu"):
        self.cfg, self.device = cfg, torch.device(device)
        self.online = net.to(self.device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.optimizer = make_optimizer(self.online.parameters(), cfg)
        self.updates = 0
        self.samples = 0

    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.device)

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
        """One gradient step; returns metrics and the new priorities |G - q(s, a)| of the batch."""
        obs, next_obs = self._tensor(batch["obs"]), self._tensor(batch["next_obs"])
        reward, discount = self._tensor(batch["reward"]).float(), self._tensor(batch["discount"]).float()
        if self.cfg.double_q:  # one online pass over s and s' (the s' half only picks actions)
            q, q_next_online = self.online(torch.cat([obs, next_obs])).split(len(obs))
        else:
            q = self.online(obs)
        with torch.no_grad():
            q_next_target = self.target(next_obs)
            if self.cfg.double_q:
                target = double_q_targets(reward, discount, q_next_online.detach(), q_next_target)
            else:
                target = q_targets(reward, discount, q_next_target)
        loss, td = td_loss(q, self._tensor(batch["action"]), target, self._tensor(weights).float(),
                           self.cfg.loss)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.online.parameters(), self.cfg.grad_clip)
        self.optimizer.step()
        self.updates += 1
        self.samples += len(td)
        if self.updates % self.cfg.target_update == 0:
            self.target.load_state_dict(self.online.state_dict())
        metrics = {"loss": loss.item(), "grad_norm": grad_norm.item(), "q_mean": q.mean().item()}
        return metrics, td.abs().cpu().numpy()

    def pull(self) -> tuple[dict[str, torch.Tensor], int]:
        """Current online parameters (CPU) and their version, the update count."""
        return {k: v.detach().cpu() for k, v in self.online.state_dict().items()}, self.updates

    def state_dict(self) -> dict[str, Any]:
        return {"online": self.online.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "updates": self.updates, "samples": self.samples}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.updates, self.samples = int(state["updates"]), int(state["samples"])

    def counters(self) -> dict[str, float]:
        return {"updates": self.updates, "samples": self.samples}
