"""The Ape-X DPG learner (Horgan et al. 2018, appendix D): owns actor, critic and their targets."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.dpg import dpg_actor_loss, dpg_critic_loss, dpg_critic_targets, polyak_update, smoothed_target_action
from distrl.components.learner import load_optimizer_state
from distrl.nets.dpg import dpg_pair
from distrl.nets.normalization import ObsNorm
from distrl.nets.precision import bf16_autocast


class DPGLearner:
    """n-step DPG on prioritized batches; the parameter source for Ape-X DPG actors.

    Each step updates the critic on the n-step target, then the actor against the just-updated
    critic (as in DDPG). Importance weights scale the critic loss only: they correct the critic's
    sampling bias, while the actor's loss is a mean over states, not a regression on transitions."""

    def __init__(self, actor: nn.Module, critic: nn.Module, *, lr: float = 1e-4, actor_lr: float = 0.0,
                 target_update: int = 100, actor_grad_clip: float = 1.0, tau: float = 0.0,
                 critic2: nn.Module | None = None,
                 target_noise: float = 0.0, target_noise_clip: float = 0.5, policy_delay: int = 1,
                 low: Sequence[float] | np.ndarray | None = None, high: Sequence[float] | np.ndarray | None = None,
                 seed: int = 0,
                 device: str = "cpu", fused: bool = False, bf16: bool = False):
        """The paper's rule by default. TD3's options (Fujimoto et al. 2018): `tau` > 0 replaces the hard
        copies every `target_update` batches by Polyak averaging after each actor update; `critic2`
        (clipped double Q) bootstraps from the smaller of two target critics; `target_noise` > 0 smooths
        the target action (needs the action bounds `low`, `high`); the actor and the targets move once
        every `policy_delay` critic updates. `fused` takes torch's fused Adam kernel (the same rule, fewer
        kernel calls: bench/dpg_learner_step.py). `actor_lr` > 0 gives the actor its own Adam rate, as
        DDPG's 1e-4 beside the critic's 1e-3 (0: `lr` for both, the paper's). An actor with an ObsNorm
        (`obs_norm`) gets its statistics updated from each sampled batch's observations, and every network
        here shares that one ObsNorm. `bf16` runs the networks' hidden layers in bfloat16 autocast (1.9x the
        twin-critics step's float32 rate on a CPU with bf16 units); their output layers, the targets and
        the losses stay float32."""
        if target_noise > 0 and (low is None or high is None):
            raise ValueError("target_noise needs the action bounds low and high")
        self.device = torch.device(device)
        self.actor, self.critic = actor.to(self.device), critic.to(self.device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.critic2 = None if critic2 is None else critic2.to(self.device)
        self.critic2_target = None if self.critic2 is None else copy.deepcopy(self.critic2).requires_grad_(False)
        norm = getattr(self.actor, "obs_norm", None)
        self.obs_norm = norm if isinstance(norm, ObsNorm) else None
        if self.obs_norm is not None:  # one set of statistics: targets and twin see what the online nets see
            for net in (self.critic, self.actor_target, self.critic_target, self.critic2, self.critic2_target):
                if net is not None:
                    net.obs_norm = self.obs_norm
        critic_params = [*self.critic.parameters(), *([] if self.critic2 is None else self.critic2.parameters())]
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=actor_lr or lr, fused=fused or None)
        self.critic_optimizer = torch.optim.Adam(critic_params, lr=lr, fused=fused or None)
        self.target_update, self.actor_grad_clip = target_update, actor_grad_clip
        self.tau, self.policy_delay = tau, policy_delay
        self.target_noise, self.target_noise_clip = target_noise, target_noise_clip
        self.low, self.high = (None if x is None else torch.as_tensor(x, dtype=torch.float32, device=self.device)
                               for x in (low, high))
        self.noise = torch.Generator(self.device).manual_seed(seed)
        self.bf16 = bf16
        self.updates = 0
        self.samples = 0
        self.actor_loss = 0.0  # the latest actor loss, reported between delayed actor updates

    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.device)

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
        """One critic step and, every `policy_delay` steps, one actor step; returns metrics and the new
        priorities |G - q(s, a)| (of the first critic, the one actors compute priorities with)."""
        if self.obs_norm is not None:
            self.obs_norm.update(batch["obs"])
        obs, next_obs = self._tensor(batch["obs"]), self._tensor(batch["next_obs"])
        action = self._tensor(batch["action"]).float()
        reward, discount = self._tensor(batch["reward"]).float(), self._tensor(batch["discount"]).float()
        w = self._tensor(weights).float()
        with bf16_autocast(self.device, self.bf16):
            target = self._critic_targets(next_obs, reward, discount)
            q = self.critic(obs, action)
            critic_loss, td = dpg_critic_loss(q, target, w)
            if self.critic2 is not None:
                critic_loss = critic_loss + dpg_critic_loss(self.critic2(obs, action), target, w)[0]
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()

        self.updates += 1
        self.samples += len(td)
        if self.updates % self.policy_delay == 0:
            self._actor_step(obs)
            if self.tau > 0:
                for target_net, online in self._target_pairs():
                    polyak_update(target_net, online, self.tau)
        if self.tau == 0 and self.updates % self.target_update == 0:
            for target_net, online in self._target_pairs():
                target_net.load_state_dict(online.state_dict())
        metrics = {"critic_loss": critic_loss.item(), "actor_loss": self.actor_loss, "q_mean": q.mean().item()}
        return metrics, td.abs().cpu().numpy()

    @torch.no_grad()
    def _critic_targets(self, next_obs: torch.Tensor, reward: torch.Tensor, discount: torch.Tensor) -> torch.Tensor:
        next_action = self.actor_target(next_obs)
        if self.target_noise > 0:
            noise = torch.randn(next_action.shape, generator=self.noise, device=self.device) * self.target_noise
            assert self.low is not None and self.high is not None  # __init__ refuses target_noise without them
            next_action = smoothed_target_action(next_action, noise, self.target_noise_clip, self.low, self.high)
        next_q = self.critic_target(next_obs, next_action)
        if self.critic2_target is not None:
            next_q = torch.minimum(next_q, self.critic2_target(next_obs, next_action))
        return dpg_critic_targets(reward, discount, next_q)

    def _actor_step(self, obs: torch.Tensor) -> None:
        with bf16_autocast(self.device, self.bf16):
            actor_loss = dpg_actor_loss(self.critic(obs, self.actor(obs)))
        self.actor_optimizer.zero_grad(set_to_none=True)
        # inputs=: gradients reach the actor only; the critic's .grad is never touched by this loss.
        actor_loss.backward(inputs=list(self.actor.parameters()))
        if self.actor_grad_clip > 0:  # element-wise, not the norm; 0: none (TD3)
            nn.utils.clip_grad_value_(self.actor.parameters(), self.actor_grad_clip)
        self.actor_optimizer.step()
        self.actor_loss = actor_loss.item()

    def _target_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        pairs = [(self.actor_target, self.actor), (self.critic_target, self.critic)]
        return pairs if self.critic2 is None else [*pairs, (cast(nn.Module, self.critic2_target), self.critic2)]

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
                "updates": self.updates, "samples": self.samples, "noise": self.noise.get_state(),
                **({} if self.critic2 is None else {
                    "critic2": self.critic2.state_dict(),
                    "critic2_target": cast(nn.Module, self.critic2_target).state_dict()})}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actor.load_state_dict(state["actor"])
        self.critic.load_state_dict(state["critic"])
        self.actor_target.load_state_dict(state["actor_target"])
        self.critic_target.load_state_dict(state["critic_target"])
        load_optimizer_state(self.actor_optimizer, state["actor_optimizer"])
        load_optimizer_state(self.critic_optimizer, state["critic_optimizer"])
        self.updates, self.samples = int(state["updates"]), int(state["samples"])
        if "noise" in state:  # checkpoints from before TD3's options have none
            self.noise.set_state(state["noise"])
        if self.critic2 is not None:
            self.critic2.load_state_dict(state["critic2"])
            assert self.critic2_target is not None  # made with critic2
            self.critic2_target.load_state_dict(state["critic2_target"])

    def counters(self) -> dict[str, float]:
        return {"updates": self.updates, "samples": self.samples}
