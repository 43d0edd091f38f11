"""Ape-X DQN (Horgan et al. 2018): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import (
    InlineConfig,
    LearnerConfig,
    NetConfig,
    RayConfig,
    ReplayConfig,
    RunConfig,
    check,
    ranged,
)


@dataclass
class ActorConfig:
    envs_per_actor: int = ranged(1, ge=1)  # envs stepped together with one batched forward pass
    # Atari: step them in ale-py's C++ vector env (envs/atari_vector.py; same observations, 1.35x per core)
    vector_env: bool = False
    epsilon_base: float = ranged(0.4, ge=0, le=1)  # eps_i = epsilon_base ** (1 + epsilon_alpha * i / (N - 1))
    epsilon_alpha: float = ranged(7.0, ge=0)
    # learner updates over which every eps_i falls linearly from 1 (0: none, the paper's)
    epsilon_warmup_updates: int = ranged(0, ge=0)
    flush_size: int = ranged(50, ge=1)  # transitions per batch sent to replay (B = 50)
    pull_every: int = ranged(400, ge=1)  # frames between parameter pulls
    # the acting forward pass's hidden layers in bfloat16 autocast (q outputs float32) where the actor's device
    # has bf16 units; float32 elsewhere (not in the paper: half a 2-core Pong actor's time was that pass)
    bf16: bool = False


@dataclass
class ApexConfig(RunConfig):
    architecture: str = "apex"
    actor: ActorConfig = field(default_factory=ActorConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    net: NetConfig = field(default_factory=NetConfig)
    inline: InlineConfig = field(default_factory=InlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    def validate(self) -> None:
        super().validate()
        if self.actor.vector_env:
            from distrl.envs import is_atari
            check(is_atari(self.env), "actor.vector_env", self.actor.vector_env,
                  f"false: it steps Atari games in ale-py's vector env, and {self.env!r} is not Atari")
