"""DQN (Mnih et al. 2015): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import InlineConfig, LearnerConfig, RayConfig, RunConfig, ranged


@dataclass
class DQNActorConfig:
    epsilon_final: float = ranged(0.1, ge=0, le=1)
    epsilon_steps: int = ranged(1_000_000, ge=1)  # agent steps (actions) over which epsilon falls from 1 to epsilon_final
    envs_per_actor: int = ranged(1, ge=1)
    flush_size: int = ranged(4, ge=1)  # transitions per add to the replay
    pull_every: int = ranged(16, ge=1)  # frames between parameter pulls: 4 actions on Atari, one learner update


@dataclass
class DQNReplayConfig:
    capacity: int = ranged(1_000_000, ge=1)  # replay memory size; the oldest leave first
    min_size: int = ranged(50_000, ge=1)  # replay start size: uniform random acting until then
    trim_every: int = ranged(100, ge=1)  # learner steps between evictions down to capacity
    compress: bool = True            # compress image observations in the table
    codec: str = ranged("zlib", choices=("zlib", "lz4"))  # as ReplayConfig's
    share_frames: bool = False       # as ReplayConfig's
    shards: int = ranged(1, ge=1)
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it
    samples_per_insert: float = ranged(8.0, gt=0)  # update frequency 4, minibatch 32: one batch per 4 actions


@dataclass
class DQNLearnerConfig(LearnerConfig):
    """Nature DQN's values over Ape-X's learner options."""
    batch_size: int = ranged(32, ge=1)
    n_step: int = ranged(1, ge=1)
    double_q: bool = False
    loss: str = ranged("huber", choices=("mse", "huber"))  # the error clipped to [-1, 1]
    lr: float = ranged(0.00025, gt=0)
    rms_eps: float = ranged(0.01, gt=0)  # min squared gradient
    grad_clip: float = ranged(0.0, ge=0)  # none: the Huber loss clips the error
    target_update: int = ranged(10_000, ge=1)  # target network update frequency


@dataclass
class DQNNetConfig:
    dueling: bool = False
    hidden: tuple[int, ...] = (512,)  # MLP torso for vector observations (the Nature CNN for Atari)
    factory: str = ""                # a user's network: "factory:module:function" (see distrl.train's network=)


@dataclass
class DQNInlineConfig(InlineConfig):
    actor_steps: int = ranged(4, ge=1)  # a round: 4 actions, then the learner's one batch (DQN's update frequency)


@dataclass
class DQNConfig(RunConfig):
    architecture: str = "dqn"
    actors: int = ranged(1, ge=1)
    eval_protocol: str = "dqn"  # epsilon 0.05, 30 episodes of up to 5 minutes (EVAL_PROTOCOLS)
    eval_episodes: int = ranged(30, ge=0)
    eval_epsilon: float = ranged(0.05, ge=0, le=1)
    eval_max_frames: int = ranged(18_000, ge=4, accepted="whole numbers >= 4 (emulator frames)")
    actor: DQNActorConfig = field(default_factory=DQNActorConfig)
    replay: DQNReplayConfig = field(default_factory=DQNReplayConfig)
    learner: DQNLearnerConfig = field(default_factory=DQNLearnerConfig)
    net: DQNNetConfig = field(default_factory=DQNNetConfig)
    inline: DQNInlineConfig = field(default_factory=DQNInlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)

