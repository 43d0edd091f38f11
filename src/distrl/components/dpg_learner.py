"""The Ape-X DPG learner (Horgan et al. 2018, appendix D): owns actor, critic and their targets."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from distrl.algos.dpg import dpg_actor_loss, dpg_critic_loss, dpg_critic_targets
from distrl.nets.dpg import dpg_pair


class DPGLearner:
    """n-step DPG on prioritized batches; the parameter source for Ape-X DPG actors.

    Each step updates the critic on the n-step target, then the actor against the just-updated
    critic (as in DDPG). Importance weights scale the critic loss only: they correct the critic's
    sampling bias, while the actor's loss is a mean over states, not a regression on transitions."""

    def __init__(self, actor: nn.Module, critic: nn.Module, *, lr: float = 1e-4, target_update: int = 100,
                 actor_grad_clip: float = 1.0, device: str = "cpu"):
        self.device = torch.device(device)
        self.actor, self.critic = actor.to(self.device), critic.to(self.device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.target_update, self.actor_grad_clip = target_update, actor_grad_clip
        self.updates = 0
        self.samples = 0

    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.device)

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
        """One critic and one actor step; returns metrics and the new priorities |G - q(s, a)|."""
        obs, next_obs = self._tensor(batch["obs"]), self._tensor(batch["next_obs"])
        action = self._tensor(batch["action"]).float()
        reward, discount = self._tensor(batch["reward"]).float(), self._tensor(batch["discount"]).float()
        with torch.no_grad():
            next_q = self.critic_target(next_obs, self.actor_target(next_obs))
            target = dpg_critic_targets(reward, discount, next_q)
        q = self.critic(obs, action)
        critic_loss, td = dpg_critic_loss(q, target, self._tensor(weights).float())
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()

        actor_loss = dpg_actor_loss(self.critic(obs, self.actor(obs)))
        self.actor_optimizer.zero_grad(set_to_none=True)
        # inputs=: gradients reach the actor only; the critic's .grad is never touched by this loss.
        actor_loss.backward(inputs=list(self.actor.parameters()))
        nn.utils.clip_grad_value_(self.actor.parameters(), self.actor_grad_clip)  # element-wise, not the norm
        self.actor_optimizer.step()

        self.updates += 1
        self.samples += len(td)
        if self.updates % self.target_update == 0:
            self.actor_target.load_state_dict(self.actor.state_dict())
            self.critic_target.load_state_dict(self.critic.state_dict())
        metrics = {"critic_loss": critic_loss.item(), "actor_loss": actor_loss.item(), "q_mean": q.mean().item()}
        return metrics, td.abs().cpu().numpy()

    def latest(self) -> tuple[dict[str, torch.Tensor], int]:
        """Current actor and critic parameters (CPU, keyed as `dpg_pair`) and their version, the
        update count. Actors need the critic too: they compute the initial priorities."""
        state = dpg_pair(self.actor, self.critic).state_dict()
        return {k: v.detach().cpu() for k, v in state.items()}, self.updates

    def state_dict(self) -> dict[str, Any]:
        """Tensors and python scalars only, so it loads with torch.load(weights_only=True)."""
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "actor_target": self.actor_target.state_dict(), "critic_target": self.critic_target.state_dict(),
                "actor_optimizer": self.actor_optimizer.state_dict(),
                "critic_optimizer": self.critic_optimizer.state_dict(),
                "updates": self.updates, "samples": self.samples}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actor.load_state_dict(state["actor"])
        self.critic.load_state_dict(state["critic"])
        self.actor_target.load_state_dict(state["actor_target"])
        self.critic_target.load_state_dict(state["critic_target"])
        self.actor_optimizer.load_state_dict(state["actor_optimizer"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        self.updates, self.samples = int(state["updates"]), int(state["samples"])

    def counters(self) -> dict[str, float]:
        return {"updates": self.updates, "samples": self.samples}
