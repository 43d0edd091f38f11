"""R2D2's learning component (Kapturowski et al. 2019): recurrent Q-learning on replayed sequences."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from distrl.algos.r2d2 import sequence_loss, sequence_priorities, sequence_td_errors
from distrl.components.learner import DQNLearner
from distrl.nets.precision import bf16_autocast

if TYPE_CHECKING:
    from distrl.nets.recurrent_q import RecurrentQNetwork


class R2D2Learner(DQNLearner):
    """Online and target recurrent networks, both started from each sequence's stored state and burned in
    over its first `burn_in` steps without gradients; n-step double-Q through the value rescaling over
    the rest (the trace); Adam. With `bf16` the torso and the LSTM run in bfloat16 autocast: 4.8x the
    float32 matmul rate and 1.8x the LSTM's on a CPU with bf16 units (bench/r2d2_learner_step.py); the
    network's head, the targets and the loss stay float32. Priorities are the sequences' eta-mix of max and
    mean |TD error|. The parameter source for its actors, and saved and restored as DQNLearner is.

    A batch holds [B, ...] items as the replay gives them: obs [B, L+1, ...] (the state after the last
    step too), prev_action, prev_reward, action, reward, discount, mask [B, L], state_h, state_c [B, H]."""

    cfg: Any  # an R2D2LearnerConfig (architectures/r2d2/config.py)
    online: RecurrentQNetwork
    target: RecurrentQNetwork
    optimizer: torch.optim.Optimizer  # its own Adam, always

    def __init__(self, net: nn.Module, cfg: Any, device: str = "cpu"):
        super().__init__(net, cfg, device, applies_gradients=False)  # its own Adam, with the paper's epsilon
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=cfg.lr, eps=cfg.adam_eps)

    def step(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
        """One gradient step; returns metrics and the batch's new sequence priorities."""
        loss, td, q, mask = self._sequence_loss(batch, weights)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.online.parameters(), self.cfg.grad_clip or math.inf)
        self.optimizer.step()
        self.updates += 1
        self.samples += td.shape[1]
        if self.updates % self.cfg.target_update == 0:
            self.target.load_state_dict(self.online.state_dict())
        metrics = {"loss": loss.item(), "grad_norm": grad_norm.item(), "q_mean": q[mask].mean().item()}
        return metrics, sequence_priorities(td, mask, self.cfg.priority_eta).cpu().numpy()

    def _time_major(self, batch: dict[str, np.ndarray], key: str) -> torch.Tensor:
        return self._tensor(batch[key]).transpose(0, 1)

    def _sequence_loss(self, batch: dict[str, np.ndarray], weights: np.ndarray) -> tuple[torch.Tensor, ...]:
        burn = self.cfg.burn_in
        obs = self._time_major(batch, "obs")
        prev_action, prev_reward = self._time_major(batch, "prev_action"), self._time_major(batch, "prev_reward")
        action, mask = self._time_major(batch, "action"), self._time_major(batch, "mask").bool()
        stored = (self._tensor(batch["state_h"]).float().unsqueeze(0), self._tensor(batch["state_c"]).float().unsqueeze(0))
        # The trace's inputs, and the state after it: its previous action and reward are the last step's.
        trace_prev_action = torch.cat([prev_action[burn:], action[-1:]])
        trace_prev_reward = torch.cat([prev_reward[burn:], self._time_major(batch, "reward")[-1:]])
        burn_mask = mask[:burn]
        with bf16_autocast(self.device, self.cfg.bf16):
            online_state = self.online.burn_in(obs[:burn], prev_action[:burn], prev_reward[:burn], stored, burn_mask)
            q_online, _ = self.online(obs[burn:], trace_prev_action, trace_prev_reward, online_state)
            with torch.no_grad():
                target_state = self.target.burn_in(obs[:burn], prev_action[:burn], prev_reward[:burn], stored,
                                                   burn_mask)
                q_target, _ = self.target(obs[burn:], trace_prev_action, trace_prev_reward, target_state)
        trace_mask = mask[burn:]
        td = sequence_td_errors(q_online, q_target, action[burn:], self._time_major(batch, "reward")[burn:],
                                self._time_major(batch, "discount")[burn:], trace_mask, self.cfg.n_step,
                                self.cfg.rescale_eps)
        loss = sequence_loss(td, trace_mask, self._tensor(weights).float())
        return loss, td, q_online[:-1], trace_mask
