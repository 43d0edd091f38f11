"""Distributed BA3C (Adamski et al. 2018): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import RunConfig, ranged


@dataclass
class BA3CWorkerConfig:
    n_sim: int = ranged(10, ge=1)  # envs per worker, stepped together with one batched forward pass
    t_max: int = ranged(5, ge=1)  # steps per env before its n-step returns are computed (BA3C's local_time_max)
    batch_size: int = ranged(32, ge=1)  # bs: data points (state, action, n-step return) per gradient


@dataclass
class BA3CAlgoConfig:
    gamma: float = ranged(0.99, ge=0, le=1)
    entropy_beta: float = ranged(0.01, ge=0)
    value_coef: float = ranged(0.5, ge=0)
    grad_clip: float = ranged(40.0, gt=0)  # global gradient-norm clip on each worker's gradient
    reward_scale: float = ranged(1.0, gt=0)  # rewards are multiplied by this for learning only (reported returns are raw)


@dataclass
class BA3CAdamConfig:
    lr: float = ranged(1e-3, gt=0)
    eps: float = ranged(1e-8, gt=0)  # the paper's table; it used 1e-3 for Pong
    beta1: float = ranged(0.8, ge=0, lt=1)
    beta2: float = ranged(0.75, ge=0, lt=1)
    anneal: bool = False             # lr linearly to 0 over max_frames, as A3C does; the paper's BA3C keeps it constant


@dataclass
class BA3CSyncConfig:
    mode: str = ranged("sync", choices=("sync", "async"))  # sync: the chief applies a round's mean; async: each push on arrival
    fraction: float = ranged(0.9, gt=0, le=1)  # sync: share of the workers whose gradients close a round


@dataclass
class BA3CPSConfig:
    shards: int = ranged(4, ge=1)  # ps: parameter-server shards


@dataclass
class BA3CNetConfig:
    hidden: tuple[int, ...] = (128,)  # the fully connected layer (256: the paper's initial model); MLP for vectors
    factory: str = ""                # a user's network: "factory:module:function" (see distrl.train's network=)


@dataclass
class BA3CRayConfig:
    rounds_per_call: int = ranged(10, ge=1)  # rounds (a gradient each) a worker takes part in per remote call (progress is counted per call)


@dataclass
class BA3CConfig(RunConfig):
    architecture: str = "ba3c"
    actors: int = ranged(64, ge=1)  # n workers (the paper's final setup)
    checkpoint_every: int = ranged(1000, ge=1)  # rounds (global steps) between checkpoints
    eval_every: int = ranged(1000, ge=0, accepted="whole numbers >= 0 (0: only at the end)")  # rounds between greedy evaluations with frozen parameters (ray)
    worker: BA3CWorkerConfig = field(default_factory=BA3CWorkerConfig)
    rl: BA3CAlgoConfig = field(default_factory=BA3CAlgoConfig)
    learner: BA3CAdamConfig = field(default_factory=BA3CAdamConfig)  # Adam, applied at the parameter shards
    sync: BA3CSyncConfig = field(default_factory=BA3CSyncConfig)
    ps: BA3CPSConfig = field(default_factory=BA3CPSConfig)
    net: BA3CNetConfig = field(default_factory=BA3CNetConfig)
    ray: BA3CRayConfig = field(default_factory=BA3CRayConfig)

