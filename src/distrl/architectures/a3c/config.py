"""The A3C family (Mnih et al. 2016): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import RunConfig, check, ranged

A3C_ALGOS = ("a3c", "nstep_q", "onestep_q", "sarsa")


@dataclass
class A3CAlgoConfig:
    t_max: int = ranged(5, ge=1)  # steps per rollout (n-step Q, A3C) or per accumulated update (one-step)
    gamma: float = ranged(0.99, ge=0, le=1)
    entropy_beta: float = ranged(0.01, ge=0)  # A3C: 0.01 for softmax policies, 1e-4 for Gaussian ones
    value_coef: float = ranged(0.5, ge=0)  # 1/2 (R - V)^2
    grad_clip: float = ranged(40.0, gt=0)  # global gradient-norm clip before the push (common practice, not in the paper)
    target_update: int = ranged(40_000, ge=1)  # Q methods: global frames between target-network refreshes
    epsilon_anneal_frames: int = ranged(4_000_000, ge=1)  # Q methods: 1 -> the worker's final epsilon over these global frames
    reward_scale: float = ranged(1.0, gt=0)  # rewards are multiplied by this for learning only (reported returns are raw)
    reduction: str = ranged("sum", choices=("sum", "mean"))  # a rollout's step losses summed, as the paper accumulates them


@dataclass
class SharedRMSPropConfig:
    lr: float = ranged(7e-4, gt=0)
    decay: float = ranged(0.99, ge=0, lt=1)
    eps: float = ranged(0.1, gt=0)
    anneal: bool = True              # lr linearly to 0 over max_frames, as the paper (a push counts t_max steps)
    lr_sample: str = ""              # loguniform: lr drawn per run from LogUniform(1e-4, 1e-2) (the paper's sweeps)
    shared_stats: bool = True        # false: each worker keeps its own statistics (the paper's comparison)


@dataclass
class ParamStoreConfig:
    store: str = ranged("shared", choices=("shared", "sharded"), accepted="shared (one host, shared memory) or sharded (the parameter server)")  # shared: SharedMemoryParams on this host; sharded: the parameter server
    shards: int = ranged(1, ge=1)  # sharded store only


@dataclass
class A3CNetConfig:
    hidden: tuple[int, ...] = (128,)  # MLP torso for vector observations (A3C CNN for images)
    lstm: bool = False               # A3C only: 256 LSTM cells after the torso
    activation: str = ranged("relu", choices=("relu", "elu"))  # the Atari CNN's units: the paper's ReLU, or ELU (the PyTorch and universe-starter A3Cs'), which keeps a gradient below 0
    factory: str = ""                # a user's network: "factory:module:function" (see distrl.train's network=)


@dataclass
class A3CRayConfig:
    steps_per_call: int = ranged(100, ge=1)  # env steps a worker takes per remote call (progress is counted per call)


@dataclass
class A3CConfig(RunConfig):
    architecture: str = "a3c"
    algo: str = "a3c"                # a3c | nstep_q | onestep_q | sarsa
    actors: int = ranged(16, ge=1)  # actor-learners
    checkpoint_every: int = ranged(10_000, ge=1)  # global updates between checkpoints
    rl: A3CAlgoConfig = field(default_factory=A3CAlgoConfig)
    learner: SharedRMSPropConfig = field(default_factory=SharedRMSPropConfig)  # the actor-learners' shared RMSProp
    ps: ParamStoreConfig = field(default_factory=ParamStoreConfig)
    net: A3CNetConfig = field(default_factory=A3CNetConfig)
    ray: A3CRayConfig = field(default_factory=A3CRayConfig)

    def validate(self) -> None:
        super().validate()
        check(self.algo in A3C_ALGOS, "algo", self.algo, " or ".join(A3C_ALGOS))
        check(not (self.net.lstm and self.algo != "a3c"), "net.lstm", self.net.lstm, "false unless algo is a3c")
        check(not (self.net.lstm and self.net.factory), "net.lstm", self.net.lstm,
              "false with a user's network (net.factory)")
