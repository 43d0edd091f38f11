"""The A3C family (Mnih et al. 2016) as a wiring: N actor-learners, each with its own env and no
replay, pushing gradients to one parameter store: SharedMemoryParams (one host, shared RMSProp,
Hogwild) or the sharded parameter server (`ps.store=sharded`, RMSProp on every shard).

This module says what to create and how the parts connect; a runtime (inline, ray) says where."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from distrl.algos.q_learning import exploration_epsilons
from distrl.architectures.common import Saveable, Seeds, frame_skip, set_torch_threads
from distrl.components.actor_learner import ActorLearner
from distrl.components.evaluator import Evaluator
from distrl.config import A3CConfig
from distrl.envs import is_atari, make_env
from distrl.errors import ConfigError
from distrl.nets import A3CCNN, QNetwork, image_kind, make_policy_value_net, make_q_network
from distrl.params.param_server import ParamShard, flatten, shard_slices, unflatten_into


class A3C(Saveable):
    architecture = "a3c"

    def __init__(self, cfg: A3CConfig):
        self.cfg = cfg
        probe = make_env(cfg.env, "eval")
        try:
            self.obs_shape = tuple(probe.observation_space.shape)
            self.action_space = probe.action_space
        finally:
            probe.close()
        self.continuous = isinstance(self.action_space, spaces.Box)
        if not isinstance(self.action_space, (spaces.Box, spaces.Discrete)):
            raise ConfigError(f"a3c needs a Discrete or Box action space, {cfg.env} has "
                              f"{type(self.action_space).__name__}")
        if self.continuous and cfg.algo != "a3c":
            raise ConfigError(f"algo={cfg.algo} needs discrete actions, but {cfg.env} has continuous ones: "
                              "use --set algo=a3c (Gaussian policy) or a discrete env such as CartPole-v1")
        if self.continuous and cfg.net.lstm:
            raise ConfigError("net.lstm=true is for discrete actions only: drop it for a continuous env")
        self.atari = is_atari(cfg.env)
        self.frame_skip = frame_skip(cfg.env)
        set_torch_threads(cfg.torch_threads, self.obs_shape)
        self.seeds = Seeds(cfg.seed, cfg.actors, ("evaluator", "epsilons", "net"))
        self.n_params = int(flatten(self.make_net()).size)
        rng = np.random.default_rng(self.seeds["epsilons"])
        self.final_epsilons = exploration_epsilons(cfg.actors, rng)

    def make_net(self) -> torch.nn.Module:
        torch.manual_seed(self.seeds["net"])  # every copy starts from the same initial parameters
        cfg = self.cfg
        if cfg.algo == "a3c":
            return make_policy_value_net(self.obs_shape, self.action_space, cfg.net.hidden, lstm=cfg.net.lstm)
        if image_kind(self.obs_shape) == "atari":  # the paper's Q methods use A3C's network, not DQN's
            torso = A3CCNN(self.obs_shape[0])
            return QNetwork(torso, torch.nn.Linear(torso.out_features, int(self.action_space.n)))
        return make_q_network(self.obs_shape, int(self.action_space.n), dueling=False, hidden=cfg.net.hidden)

    def initial_params(self) -> np.ndarray:
        return flatten(self.make_net())

    # ---- parameter stores ------------------------------------------------------------------
    def create_shared_store(self):
        """The owner's SharedMemoryParams (the runtime unlinks it at the end)."""
        from distrl.params.shared_memory import SharedMemoryParams
        o = self.cfg.optim
        return SharedMemoryParams.create(self.initial_params(), lr=o.lr, decay=o.decay, eps=o.eps,
                                         shared_stats=o.shared_stats, anneal_updates=self.anneal_updates())

    def anneal_updates(self) -> int | None:
        """Pushes over which the rate falls to 0: global frames / max_frames, a push counting one rollout
        of t_max agent steps (shorter rollouts at episode ends make it end a little early)."""
        if not self.cfg.optim.anneal:
            return None
        return max(1, round(self.cfg.max_frames / (self.cfg.rl.t_max * self.frame_skip)))

    def shard_args(self, index: int) -> tuple[np.ndarray, dict[str, Any]]:
        """A shard of the sharded store: the paper's RMSProp (eps inside the square root), as the shared store."""
        o = self.cfg.optim
        sl = shard_slices(self.n_params, self.cfg.ps.shards)[index]
        return self.initial_params()[sl], {"optimizer": "rmsprop", "lr": o.lr, "decay": o.decay, "eps": o.eps,
                                           "anneal_updates": self.anneal_updates()}

    def make_shard(self, index: int) -> ParamShard:
        values, options = self.shard_args(index)
        return ParamShard(values, **options)

    def shard_sizes(self) -> list[int]:
        return [s.stop - s.start for s in shard_slices(self.n_params, self.cfg.ps.shards)]

    # ---- workers ---------------------------------------------------------------------------
    def make_worker(self, index: int, store: Any) -> ActorLearner:
        cfg, seed = self.cfg, self.seeds.workers[index]
        cap = cfg.max_episode_frames if self.atari else None
        q_method = cfg.algo != "a3c"
        return ActorLearner(
            lambda: make_env(cfg.env, "train", seed=seed, max_episode_frames=cap), self.make_net(), store,
            algo=cfg.algo, t_max=cfg.rl.t_max, gamma=cfg.rl.gamma, entropy_beta=cfg.rl.entropy_beta,
            value_coef=cfg.rl.value_coef, grad_clip=cfg.rl.grad_clip, reward_scale=cfg.rl.reward_scale,
            reduction=cfg.rl.reduction,
            target=self.make_net().requires_grad_(False) if q_method else None,
            target_update=cfg.rl.target_update, final_epsilon=float(self.final_epsilons[index]),
            epsilon_anneal_frames=cfg.rl.epsilon_anneal_frames, frame_skip=self.frame_skip, seed=seed % 2**31)

    def make_evaluator(self, episodes: int | None = None) -> Evaluator:
        policy = "q" if self.cfg.algo != "a3c" else ("gaussian" if self.continuous else "softmax")
        epsilon = self.cfg.eval_epsilon if not self.continuous else 0.0
        return Evaluator(self.cfg.env, self.make_net(), episodes=self.cfg.eval_episodes if episodes is None
                         else episodes, epsilon=epsilon, seed=self.seeds["evaluator"], policy=policy,
                         max_episode_frames=self.cfg.eval_max_frames)

    def params(self, flat: np.ndarray) -> dict[str, torch.Tensor]:
        net = self.make_net()
        unflatten_into(net, flat)
        return net.state_dict()

    # ---- checkpoints -----------------------------------------------------------------------
    def checkpoint_meta(self) -> dict:
        return {**super().checkpoint_meta(), "algo": self.cfg.algo, "store": self.cfg.ps.store}

    def role_counts(self) -> dict[str, tuple[int, str]]:
        if self.cfg.ps.store == "shared":
            return {"ps": (1, "ps.store=sharded --set ps.shards")}
        return {"ps": (self.cfg.ps.shards, "ps.shards")}

    @staticmethod
    def store_states(store: Any) -> list[dict]:
        """The "ps" role's states: one per shard, or the one shared-memory store's."""
        state = store.state_dict()
        return state if isinstance(state, list) else [state]

    @staticmethod
    def load_store(store: Any, states: list[dict]) -> None:
        store.load_state_dict(states if isinstance(store.state_dict(), list) else states[0])

    def policy_params(self, run_dir: Path) -> tuple[dict[str, torch.Tensor], dict]:
        data = self.restore(run_dir)
        values = torch.cat([s["values"] for s in data["roles"]["ps"]])
        return self.params(values.numpy()), {"checkpoint": data["path"], "updates": int(data["counters"]["updates"])}


def a3c_counters(totals: dict[str, int], store: dict[str, int]) -> dict[str, float]:
    """The monitor's counters: the workers' summed counts and the store's update count."""
    return {"actors/frames": totals.get("frames", 0), "actors/episodes": totals.get("episodes", 0),
            "learner/pushes": totals.get("updates", 0), "learner/updates": store["version"]}
