"""Gorila DQN (Nair et al. 2015): its config, the paper's values as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from distrl.config.sections import NetConfig, RunConfig, check, ranged


@dataclass
class GorilaActorConfig:
    epsilon_start: float = 1.0
    epsilon_end: float = 0.1
    epsilon_updates: int = ranged(1_000_000, ge=1)  # global parameter-server updates over which epsilon anneals
    pull_every: int = ranged(4, ge=1)  # frames between parameter pulls: K = 1 agent step in the paper, 4 Atari frames
    flush_size: int = ranged(4, ge=1)  # transitions per add to the replay


@dataclass
class GorilaReplayConfig:
    mode: str = ranged("local", choices=("local", "global"), accepted="local (one table per bundle) or global")  # local: one uniform table per bundle; global: one table for all
    capacity: int = ranged(1_000_000, ge=1)  # per table
    min_size: int = ranged(50_000, ge=1)  # a learner starts once its table holds this many (DQN's replay start)
    compress: bool = True


@dataclass
class GorilaLearnerConfig:
    batch_size: int = ranged(32, ge=1)
    n_step: int = ranged(1, ge=1)  # Gorila DQN is one-step Q-learning
    gamma: float = ranged(0.99, ge=0, le=1)
    double_q: bool = False
    loss: str = ranged("huber", choices=("mse", "huber"))  # DQN's error clipping to [-1, 1]
    grad_clip: float = ranged(40.0, gt=0)  # global gradient-norm clip before the push (not in the paper)
    target_update: int = ranged(60_000, ge=1)  # global parameter-server updates between target refreshes
    pull_every_steps: int = ranged(1, ge=1)  # K: learner steps between parameter pulls (1 in the paper)
    outlier_k: float = ranged(3.0, gt=0)  # drop a gradient whose |loss| > running mean + k std ("several")
    outlier_warmup: int = ranged(100, ge=2)  # losses seen before the filter may drop
    # the optimizer the parameter shards apply the learners' gradients with
    optimizer: str = "adagrad"
    lr: float = ranged(0.01, gt=0)  # not given in the paper: torch's AdaGrad default
    anneal: bool = False             # lr linearly to 0 over the run's expected global updates (not in the paper)


@dataclass
class ParamServerConfig:
    shards: int = ranged(31, ge=1)  # N_param in the paper
    staleness_bound: int = 100       # drop a push whose shard version lags by more (-1: never; unstated in the paper)


@dataclass
class BundleConfig:
    """How each bundle interleaves its actor and its learner (the same in both runtimes)."""
    actor_steps: int = ranged(4, ge=1)  # agent steps per round
    updates: int = ranged(1, ge=0)  # learner steps per round once the replay holds min_size (DQN: 1 per 4 steps)


@dataclass
class GorilaRayConfig:
    """How the ray runtime batches a bundle's calls (no effect inline)."""
    rounds_per_call: int = ranged(25, ge=1)  # rounds a bundle runs per remote call (progress is counted per call)
    max_inflight_adds: int = ranged(8, ge=1)  # global replay: adds a bundle may have in flight before it waits


@dataclass
class GorilaConfig(RunConfig):
    architecture: str = "gorila"
    actors: int = ranged(100, ge=1)  # bundles: N_act = N_learn
    checkpoint_every: int = ranged(10_000, ge=1)
    actor: GorilaActorConfig = field(default_factory=GorilaActorConfig)
    replay: GorilaReplayConfig = field(default_factory=GorilaReplayConfig)
    learner: GorilaLearnerConfig = field(default_factory=GorilaLearnerConfig)
    ps: ParamServerConfig = field(default_factory=ParamServerConfig)
    net: NetConfig = field(default_factory=lambda: NetConfig(dueling=False))
    bundle: BundleConfig = field(default_factory=BundleConfig)
    ray: GorilaRayConfig = field(default_factory=GorilaRayConfig)

    def validate(self) -> None:
        super().validate()
        from distrl.params.param_server import OPTIMIZERS
        a, p = self.actor, self.ps
        check(0 <= a.epsilon_end <= a.epsilon_start <= 1, "actor.epsilon_start/epsilon_end",
              (a.epsilon_start, a.epsilon_end), "numbers with 0 <= epsilon_end <= epsilon_start <= 1")
        check(self.learner.optimizer in OPTIMIZERS, "learner.optimizer", self.learner.optimizer, " or ".join(OPTIMIZERS))
        check(p.staleness_bound >= -1, "ps.staleness_bound", p.staleness_bound, "whole numbers >= 0, or -1 for none")

    def replay_start_steps(self) -> int:
        """With local replay every bundle's own table fills to min_size."""
        return self.replay.min_size * (self.actors if self.replay.mode == "local" else 1)
