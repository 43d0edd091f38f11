"""R2D2 (Kapturowski et al. 2019): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import InlineConfig, RayConfig, RunConfig, check, ranged


@dataclass
class R2D2LearnerConfig:
    """The paper's values (table 2)."""
    batch_size: int = ranged(64, ge=1)  # sequences
    burn_in: int = ranged(40, ge=0)  # steps unrolled from the stored state without gradients
    trace: int = ranged(80, ge=1)  # steps learned from after the burn-in
    n_step: int = ranged(5, ge=1)
    gamma: float = ranged(0.997, ge=0, le=1)
    lr: float = ranged(1e-4, gt=0)  # Adam
    adam_eps: float = ranged(1e-3, gt=0)
    grad_clip: float = ranged(0.0, ge=0)  # global gradient-norm clip (0: none; the paper states none)
    target_update: int = ranged(2500, ge=1)  # updates between target-network copies
    rescale_eps: float = ranged(1e-3, gt=0)  # h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x
    priority_eta: float = ranged(0.9, ge=0, le=1)  # eta max |delta| + (1 - eta) mean |delta| per sequence
    bf16: bool = False  # bfloat16 autocast in the torso and the LSTM (the head, targets and loss stay float32) where the device has bf16 units; float32 elsewhere (not in the paper)
    prefetch: int = ranged(16, ge=0)
    prefetch_threads: int = ranged(1, ge=1)


@dataclass
class R2D2ActorConfig:
    envs_per_actor: int = ranged(1, ge=1)  # envs stepped together with one batched forward pass
    epsilon_base: float = ranged(0.4, ge=0, le=1)  # Ape-X's eps_i = epsilon_base ** (1 + epsilon_alpha * i / (N - 1))
    epsilon_alpha: float = ranged(7.0, ge=0)
    flush_size: int = ranged(4, ge=1)  # sequences per batch sent to the replay
    pull_every: int = ranged(400, ge=1)  # frames between parameter pulls (Ape-X's 400)
    sequence_period: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: the trace length)")  # steps between sequence starts; 0: trace, so traces tile an episode and sequences overlap by the burn-in


@dataclass
class R2D2ReplayConfig:
    capacity: int = ranged(100_000, ge=1)  # sequences (the paper's 4M observations in part-overlapping sequences)
    alpha: float = ranged(0.9, ge=0)  # the paper's priority exponent
    beta: float = ranged(0.6, ge=0, le=1)  # importance sampling (the 0.6; the paper's text says it left it out)
    min_size: int = ranged(5_000, ge=1)  # sequences before learning starts
    trim_every: int = ranged(100, ge=1)
    compress: bool = True            # compress image observations in the table
    codec: str = ranged("zlib", choices=("zlib", "lz4"))  # as ReplayConfig's
    shards: int = ranged(1, ge=1)
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it
    samples_per_insert: float = ranged(0.0, ge=0, accepted="numbers >= 0 (0: actors never wait for the learner)")  # sampled sequences per inserted one


@dataclass
class R2D2NetConfig:
    lstm_units: int = ranged(512, ge=1)
    hidden: tuple[int, ...] = (512,)  # MLP torso for vector observations (the Nature convolutions for Atari)
    factory: str = ""                # a user's network: not taken (r2d2 needs its recurrent interface); must stay empty


@dataclass
class R2D2Config(RunConfig):
    architecture: str = "r2d2"
    actor: R2D2ActorConfig = field(default_factory=R2D2ActorConfig)
    replay: R2D2ReplayConfig = field(default_factory=R2D2ReplayConfig)
    learner: R2D2LearnerConfig = field(default_factory=R2D2LearnerConfig)
    net: R2D2NetConfig = field(default_factory=R2D2NetConfig)
    inline: InlineConfig = field(default_factory=InlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    def validate(self) -> None:
        super().validate()
        check(not self.net.factory, "net.factory", self.net.factory,
              "empty: r2d2 builds its own recurrent network (a user's network is not taken yet)")

    def replay_start_steps(self) -> int:
        """The replay's items are sequences, one every sequence_period steps (0: the trace length)."""
        return self.replay.min_size * (self.actor.sequence_period or self.learner.trace)
