"""Ape-X DPG (Horgan et al. 2018, appendix D): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import InlineConfig, RayConfig, RunConfig, check, ranged


@dataclass
class DPGActorConfig:
    envs_per_actor: int = ranged(1, ge=1)
    sigma: float = ranged(0.3, ge=0)  # Gaussian exploration noise on each action (action units), clipped to bounds
    flush_size: int = ranged(50, ge=1)  # transitions per batch sent to replay
    pull_every: int = ranged(400, ge=1)  # frames between parameter pulls
    random_frames: int = ranged(0, ge=0)  # each actor's first frames act uniformly at random (TD3's start; 0: the policy from the start)


@dataclass
class DPGReplayConfig:
    capacity: int = ranged(1_000_000, ge=1)  # kept by `eviction`: prioritized (the paper's) or fifo
    sampling: str = ranged("prioritized", choices=("prioritized", "uniform"))  # uniform: TD3's replay, importance weights 1
    eviction: str = ranged("prioritized", choices=("prioritized", "fifo"))  # past capacity: low priorities first, or the oldest
    alpha: float = ranged(0.6, ge=0)
    beta: float = ranged(0.4, ge=0, le=1)
    alpha_evict: float = ranged(-0.4, le=0, accepted="numbers <= 0 (low priorities leave first)")  # eviction samples items with probability ~ p^alpha_evict (low priority first)
    min_size: int = ranged(50_000, ge=1)
    trim_every: int = ranged(100, ge=1)  # learner steps between evictions down to capacity
    compress: bool = False           # kept for the Ape-X runtimes (vector observations are not compressed)
    codec: str = ranged("zlib", choices=("zlib", "lz4"))  # as ReplayConfig's
    shards: int = ranged(1, ge=1)
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it
    samples_per_insert: float = ranged(0.0, ge=0, accepted="numbers >= 0 (0: actors never wait for the learner)")  # as ReplayConfig's


@dataclass
class DPGLearnerConfig:
    batch_size: int = ranged(512, ge=1)  # unstated for DPG; "otherwise as per DQN" (appendix D): Ape-X DQN's 512
    n_step: int = ranged(3, ge=1)  # "otherwise as per DQN": Ape-X DQN's n
    gamma: float = ranged(0.99, ge=0, le=1)
    lr: float = ranged(1e-4, gt=0)  # Adam, actor and critic
    actor_lr: float = ranged(0.0, ge=0, accepted="numbers >= 0 (0: lr)")  # > 0: the actor's own Adam rate (DDPG's 1e-4 beside a critic's 1e-3)
    actor_grad_clip: float = ranged(1.0, ge=0)  # element-wise, on the actor's gradient (0: none, as TD3)
    target_update: int = ranged(100, ge=1)  # batches between target-network copies (when tau is 0)
    # TD3's options (Fujimoto et al. 2018), off in the paper's presets:
    tau: float = ranged(0.0, ge=0, le=1)  # > 0: Polyak-average the targets after each actor update instead
    twin_critics: bool = False  # clipped double Q: a second critic; the target takes the smaller of the two
    target_noise: float = ranged(0.0, ge=0)  # target policy smoothing: N(0, sigma^2) on the target action
    target_noise_clip: float = ranged(0.5, ge=0)  # the smoothing noise is clipped to +-this (action units)
    policy_delay: int = ranged(1, ge=1)  # critic updates per actor (and Polyak target) update
    fused_adam: bool = False  # torch's fused Adam kernel: the same rule, about 15% more updates/s on CPU
    bf16: bool = False  # bfloat16 autocast in the networks' hidden layers (outputs, targets, losses float32) where the device has bf16 units; float32 elsewhere
    prefetch: int = 16
    prefetch_threads: int = ranged(1, ge=1)  # sample requests kept in flight to remote replay shards


@dataclass
class DPGNetConfig:
    actor_hidden: tuple[int, ...] = (300, 200)
    critic_hidden: tuple[int, ...] = (400, 300)
    activation: str = ranged("tanh", choices=("tanh", "relu"))  # hidden layers: the paper's tanh or TD3's ReLU
    critic_action_layer: int = ranged(1, ge=0)  # the critic's hidden layer the action joins: 1 DDPG's, 0 TD3's (the input)
    obs_norm: bool = False           # normalise observations by running statistics the learner keeps (off in the paper)
    factory: str = ""                # a user's (actor, critic): "factory:module:function" (see distrl.train's network=)


@dataclass
class ApexDPGConfig(RunConfig):
    architecture: str = "apex-dpg"
    env: str = "HalfCheetah-v5"
    eval_epsilon: float = ranged(0.0, ge=0, le=1)  # the noiseless deterministic policy
    actor: DPGActorConfig = field(default_factory=DPGActorConfig)
    replay: DPGReplayConfig = field(default_factory=DPGReplayConfig)
    learner: DPGLearnerConfig = field(default_factory=DPGLearnerConfig)
    net: DPGNetConfig = field(default_factory=DPGNetConfig)
    inline: InlineConfig = field(default_factory=InlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    def validate(self) -> None:
        super().validate()
        check(len(self.net.critic_hidden) == 2, "net.critic_hidden", self.net.critic_hidden,
              "two layer sizes (the action joins at the second), e.g. 400,300")
