"""An asynchronous actor-learner (Mnih et al. 2016): one env, a local copy of the shared
parameters, no replay. Each update: take up to t_max steps with the local copy, compute the
algorithm's loss on them, and push the gradient to the parameter store (which applies it with
shared RMSProp); the reply carries the new parameters (one round trip, push_pull)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from torch import nn

from distrl.algos.actor_critic import a3c_continuous_loss, a3c_loss
from distrl.algos.q_learning import annealed_epsilon, nstep_returns, onestep_q_targets, q_loss, sarsa_targets
from distrl.params.param_server import flat_grad, unflatten_into

if TYPE_CHECKING:
    from distrl.nets.actor_critic import PolicyValueNet


class ActorLearner:
    """`algo` is one of a3c, nstep_q, onestep_q, sarsa. For the one-step methods the t_max steps
    of a rollout are the paper's gradient accumulation (5 steps) before an update. `run(steps,
    global_frames)` takes whole rollouts until `steps` env steps are done; `global_frames` (all
    workers', as the runtime last counted them) drives epsilon annealing and the target refresh."""

    def __init__(self, make_env: Callable[[], Any], net: nn.Module, store: Any, *, algo: str, t_max: int,
                 gamma: float, entropy_beta: float = 0.01, value_coef: float = 0.5, grad_clip: float = 40.0,
                 reward_scale: float = 1.0, reduction: str = "mean",
                 target: nn.Module | None = None, target_update: int = 40_000, final_epsilon: float = 0.1,
                 epsilon_anneal_frames: int = 4_000_000, frame_skip: int = 1, seed: int = 0):
        self.env, self.net, self.store, self.algo = make_env(), net, store, algo
        self.t_max, self.gamma, self.entropy_beta, self.value_coef = t_max, gamma, entropy_beta, value_coef
        self.grad_clip, self.target, self.target_update = grad_clip, target, target_update
        self.reward_scale, self.reduction = reward_scale, reduction
        self.final_epsilon, self.epsilon_anneal_frames = final_epsilon, epsilon_anneal_frames
        self.frame_skip = frame_skip
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)  # the policy's action sampling
        space = self.env.action_space
        self.continuous = hasattr(space, "low")
        self.low: np.ndarray | None
        self.high: np.ndarray | None
        self.low, self.high = (space.low, space.high) if self.continuous else (None, None)
        self.lstm = getattr(net, "lstm", None) is not None
        self.obs, _ = self.env.reset(seed=seed)
        self.state = cast("PolicyValueNet", net).initial_state(1) if self.lstm else None
        self.next_action: int | None = None  # Sarsa: a_{t+1}, chosen when s_{t+1} is seen
        self.frames = self.steps = self.updates = self.episodes = 0
        self.returns: list[float] = []
        self._target_period = -1
        self._global = 0
        self._load(*store.pull())

    # ---- parameters ------------------------------------------------------------------------
    def _load(self, flat: np.ndarray, versions: np.ndarray) -> None:
        unflatten_into(self.net, flat)
        self.versions = versions

    def _refresh_target(self) -> None:
        """Q methods: copy the current shared parameters into the target every target_update global frames."""
        period = self._global // self.target_update
        if self.target is not None and period > self._target_period:
            self.target.load_state_dict(self.net.state_dict())
            self._target_period = period

    # ---- acting ----------------------------------------------------------------------------
    def epsilon(self) -> float:
        return cast(float, annealed_epsilon(self.final_epsilon, self._global, self.epsilon_anneal_frames))

    @torch.no_grad()
    def _greedy_or_random(self, obs: np.ndarray) -> int:
        if self.rng.random() < self.epsilon():
            return int(self.rng.integers(self.env.action_space.n))
        return int(self.net(torch.as_tensor(obs)[None]).argmax(1).item())

    def run(self, steps: int, global_frames: int) -> None:
        start = self.frames
        while self.frames - start < steps * self.frame_skip:
            self._global = global_frames + self.frames - start
            self._refresh_target()
            self._rollout()

    def _rollout(self) -> None:
        actions: list[Any]  # sampled tensors (continuous A3C) or ints
        obs_list, actions, rewards, dones, next_obs_list, next_actions = [], [], [], [], [], []
        logits_list, values, means, variances = [], [], [], []
        if self.lstm:
            assert self.state is not None  # an LSTM net's state is never None
            self.state = (self.state[0].detach(), self.state[1].detach())  # truncated BPTT at the rollout start
        for _ in range(self.t_max):
            obs_t = torch.as_tensor(self.obs)[None]
            if self.algo == "a3c":
                if self.continuous:
                    mean, var, value = self.net(obs_t)
                    action_t = torch.normal(mean.detach(), var.detach().sqrt())
                    action = np.clip(action_t[0].numpy(), self.low, self.high)
                    means.append(mean[0])
                    variances.append(var[0])
                    actions.append(action_t[0])
                else:
                    logits, value, self.state = self.net(obs_t, self.state)
                    action = int(torch.distributions.Categorical(logits=logits[0]).sample())
                    logits_list.append(logits[0])
                    actions.append(action)
                values.append(value[0])
            else:
                action = self.next_action if self.next_action is not None else self._greedy_or_random(self.obs)
                self.next_action = None
                obs_list.append(self.obs)
                actions.append(action)
            next_obs, reward, terminated, truncated, info = self.env.step(action)
            done_for_learning = bool(terminated or info.get("life_loss", False))
            rewards.append(float(reward) * self.reward_scale)
            dones.append(float(done_for_learning))
            next_obs_list.append(next_obs)
            if self.algo == "sarsa":
                self.next_action = self._greedy_or_random(next_obs)
                next_actions.append(self.next_action)
            self.steps += 1
            self.frames += self.frame_skip
            if terminated or truncated:
                self.episodes += 1
                if "episode" in info:
                    self.returns.append(float(info["episode"]["r"]))
                break
            self.obs = next_obs
        # The loss before the reset: a time-limit cut bootstraps from V(s_T) under the LSTM state
        # the rollout reached, not the next episode's zeros.
        loss = self._loss(obs_list, actions, rewards, dones, next_obs_list, next_actions, logits_list, values,
                          means, variances)
        if terminated or truncated:
            self.obs, _ = self.env.reset()
            self.state = cast("PolicyValueNet", self.net).initial_state(1) if self.lstm else None
            self.next_action = None
        self._push(loss)

    # ---- learning --------------------------------------------------------------------------
    @torch.no_grad()
    def _bootstrap(self, last_next_obs: np.ndarray) -> torch.Tensor:
        obs = torch.as_tensor(last_next_obs)[None]
        if self.algo == "a3c":
            if self.continuous:
                return cast(torch.Tensor, self.net(obs)[2][0])
            return cast(torch.Tensor, self.net(obs, self.state)[1][0])  # the state after the last step
        assert self.target is not None  # the Q methods have a target network
        return cast(torch.Tensor, self.target(obs).max(1).values[0])

    def _loss(self, obs_list: list[np.ndarray], actions: list[Any], rewards: list[float], dones: list[float],
              next_obs_list: list[np.ndarray], next_actions: list[int], logits_list: list[torch.Tensor],
              values: list[torch.Tensor], means: list[torch.Tensor], variances: list[torch.Tensor]) -> torch.Tensor:
        r = torch.tensor(rewards)
        d = torch.tensor(dones)
        if self.algo in ("a3c", "nstep_q"):
            returns = nstep_returns(r, d, self._bootstrap(next_obs_list[-1]), self.gamma)
        if self.algo == "a3c":
            if self.continuous:
                loss, _ = a3c_continuous_loss(torch.stack(means), torch.stack(variances), torch.stack(actions),
                                              returns, torch.stack(values), self.entropy_beta, self.value_coef,
                                              self.reduction)
            else:
                loss, _ = a3c_loss(torch.stack(logits_list), torch.tensor(actions), returns, torch.stack(values),
                                   self.entropy_beta, self.value_coef, self.reduction)
            return loss
        q = self.net(torch.as_tensor(np.stack(obs_list)))
        a = torch.tensor(actions)
        if self.algo == "nstep_q":
            return q_loss(q, a, returns, self.reduction)
        assert self.target is not None  # the Q methods have a target network
        with torch.no_grad():
            next_q = self.target(torch.as_tensor(np.stack(next_obs_list)))
        if self.algo == "onestep_q":
            targets = onestep_q_targets(r, d, next_q, self.gamma)
        else:
            targets = sarsa_targets(r, d, next_q, torch.tensor(next_actions), self.gamma)
        return q_loss(q, a, targets, self.reduction)

    def _push(self, loss: torch.Tensor) -> None:
        self.net.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), self.grad_clip)
        self._load(*self.store.push_pull(flat_grad(self.net), self.versions))
        self.updates += 1

    def drain_returns(self) -> list[float]:
        out, self.returns = self.returns, []
        return out

    def counters(self) -> dict[str, float]:
        return {"frames": self.frames, "steps": self.steps, "episodes": self.episodes, "updates": self.updates}

    def close(self) -> None:
        self.env.close()
