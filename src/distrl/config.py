"""Dataclass configs with the papers' hyperparameters as defaults, presets, `--set` parsing, validation.

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the
value is parsed by the leaf's declared type, so every key and value is checked on load."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distrl.errors import ConfigError

RUNTIMES = ("inline", "ray")


@dataclass
class ActorConfig:
    envs_per_actor: int = 1          # envs stepped together with one batched forward pass
    epsilon_base: float = 0.4        # eps_i = epsilon_base ** (1 + epsilon_alpha * i / (N - 1))
    epsilon_alpha: float = 7.0
    flush_size: int = 50             # transitions per batch sent to replay (B = 50)
    pull_every: int = 400            # frames between parameter pulls
    max_episode_frames: int = 50_000  # training episode cap (Atari frames)


@dataclass
class ReplayConfig:
    capacity: int = 2_000_000        # soft: trimmed FIFO every `trim_every` learner steps
    alpha: float = 0.6
    beta: float = 0.4
    min_size: int = 50_000           # learning starts once the table holds this many
    trim_every: int = 100
    compress: bool = True            # zlib-compress image observations in the table
    shards: int = 1                  # tables the ray runtime spreads the replay over
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it


@dataclass
class LearnerConfig:
    batch_size: int = 512
    n_step: int = 3
    gamma: float = 0.99
    double_q: bool = True
    loss: str = "mse"                # Ape-X: 1/2 (G - q)^2; "huber" for Nature DQN
    optimizer: str = "rmsprop_centered"  # TensorFlow's centered RMSProp (eps inside the sqrt); or "adam"
    lr: float = 0.00025 / 4
    rms_decay: float = 0.95
    rms_eps: float = 1.5e-7
    grad_clip: float = 40.0          # global gradient-norm clip
    target_update: int = 2500        # batches between target-network copies
    prefetch: int = 16               # batches a background thread samples ahead (0: sample inline)


@dataclass
class NetConfig:
    dueling: bool = True
    hidden: tuple[int, ...] = (512,)  # MLP torso for vector observations (CNN for images)


@dataclass
class InlineConfig:
    """How the one-process runtime interleaves components (it has no concurrency to do it for it)."""
    actor_steps: int = 16            # env steps each actor takes per round
    updates_per_round: int = 1       # learner batches per round once replay holds min_size


@dataclass
class RayConfig:
    """How the ray runtime batches its calls (no effect inline)."""
    steps_per_call: int = 100        # env steps an actor takes per remote call (progress is counted per call)
    max_inflight_adds: int = 8       # replay adds an actor may have in flight before it waits
    publish_every: int = 10          # learner updates between parameter puts into the object store
    learner_gpus: float = -1         # -1: one GPU if the cluster has one, else 0
    samples_per_insert: float = 0.0  # >0: a SampleToInsertRatio limiter (replay/limiters.py) paces the actors (0: free-running, as in Ape-X)
    actor_node: str = ""             # IP of a node to start the actors on (soft: restarted elsewhere once it is gone)


@dataclass
class RunConfig:
    """What every architecture's run has: the env, the scale, the runtime, the bookkeeping."""
    architecture: str = ""
    env: str = "ALE/Pong-v5"
    preset: str = ""
    runtime: str = "inline"
    address: str = ""                # ray: join this cluster (also RAY_ADDRESS); empty: start a local one
    actors: int = 8
    max_frames: int = 50_000_000
    seed: int = 0
    run_dir: str = ""
    log_every_s: float = 5.0
    checkpoint_every: int = 5000     # learner updates (Gorila: global parameter-server updates) between checkpoints
    eval_protocol: str = "apex"      # named values of the three below (EVAL_PROTOCOLS); values set by name win
    eval_episodes: int = 20
    eval_epsilon: float = 0.001
    eval_max_frames: int = 108_000   # evaluation episode cap in emulator frames (Atari only)
    eval_every: int = 0              # ray: updates between evaluations of the latest parameters (0: at the end only)
    torch_threads: int = 0           # 0: one thread for vector observations (small nets), torch's default for images


@dataclass
class ApexConfig(RunConfig):
    architecture: str = "apex"
    actor: ActorConfig = field(default_factory=ActorConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    net: NetConfig = field(default_factory=NetConfig)
    inline: InlineConfig = field(default_factory=InlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)


# ---------------------------------------------------------------- Gorila (Nair et al. 2015)

@dataclass
class GorilaActorConfig:
    epsilon_start: float = 1.0
    epsilon_end: float = 0.1
    epsilon_updates: int = 1_000_000  # global parameter-server updates over which epsilon anneals
    pull_every_steps: int = 1        # K: agent steps between parameter pulls (1 in the paper)
    flush_size: int = 4              # transitions per add to the replay
    max_episode_frames: int = 50_000


@dataclass
class GorilaReplayConfig:
    mode: str = "local"              # local: one uniform table per bundle; global: one table for all
    capacity: int = 1_000_000        # per table
    min_size: int = 50_000           # a learner starts once its table holds this many (DQN's replay start)
    compress: bool = True


@dataclass
class GorilaLearnerConfig:
    batch_size: int = 32
    n_step: int = 1                  # Gorila DQN is one-step Q-learning
    gamma: float = 0.99
    double_q: bool = False
    loss: str = "huber"              # DQN's error clipping to [-1, 1]
    grad_clip: float = 40.0          # global gradient-norm clip before the push (not in the paper)
    target_update: int = 60_000      # global parameter-server updates between target refreshes
    pull_every_steps: int = 1        # K: learner steps between parameter pulls (1 in the paper)
    outlier_k: float = 3.0           # drop a gradient whose |loss| > running mean + k std ("several")
    outlier_warmup: int = 100        # losses seen before the filter may drop


@dataclass
class ParamServerConfig:
    shards: int = 31                 # N_param in the paper
    optimizer: str = "adagrad"
    lr: float = 0.01                 # not given in the paper: torch's AdaGrad default
    staleness_bound: int = 100       # drop a push whose shard version lags by more (-1: never; unstated in the paper)
    anneal: bool = False             # lr linearly to 0 over the run's expected global updates (not in the paper)


@dataclass
class BundleConfig:
    """How each bundle interleaves its actor and its learner (the same in both runtimes)."""
    actor_steps: int = 4             # agent steps per round
    updates: int = 1                 # learner steps per round once the replay holds min_size (DQN: 1 per 4 steps)
    rounds_per_call: int = 25        # ray: rounds a bundle runs per remote call (progress is counted per call)


@dataclass
class GorilaConfig(RunConfig):
    architecture: str = "gorila"
    actors: int = 100                # bundles: N_act = N_learn
    checkpoint_every: int = 10_000
    actor: GorilaActorConfig = field(default_factory=GorilaActorConfig)
    replay: GorilaReplayConfig = field(default_factory=GorilaReplayConfig)
    learner: GorilaLearnerConfig = field(default_factory=GorilaLearnerConfig)
    ps: ParamServerConfig = field(default_factory=ParamServerConfig)
    net: NetConfig = field(default_factory=lambda: NetConfig(dueling=False))
    bundle: BundleConfig = field(default_factory=BundleConfig)


# ---------------------------------------------------------------- A3C family (Mnih et al. 2016)

A3C_ALGOS = ("a3c", "nstep_q", "onestep_q", "sarsa")


@dataclass
class A3CAlgoConfig:
    t_max: int = 5                   # steps per rollout (n-step Q, A3C) or per accumulated update (one-step)
    gamma: float = 0.99
    entropy_beta: float = 0.01       # A3C: 0.01 for softmax policies, 1e-4 for Gaussian ones
    value_coef: float = 0.5          # 1/2 (R - V)^2
    grad_clip: float = 40.0          # global gradient-norm clip before the push (common practice, not in the paper)
    target_update: int = 40_000      # Q methods: global frames between target-network refreshes
    epsilon_anneal_frames: int = 4_000_000  # Q methods: 1 -> the worker's final epsilon over these global frames
    reward_scale: float = 1.0        # rewards are multiplied by this for learning only (reported returns are raw)


@dataclass
class SharedRMSPropConfig:
    lr: float = 7e-4
    decay: float = 0.99
    eps: float = 0.1
    anneal: bool = True              # lr linearly to 0 over max_frames, as the paper (a push counts t_max steps)
    lr_sample: str = ""              # loguniform: lr drawn per run from LogUniform(1e-4, 1e-2) (the paper's sweeps)
    shared_stats: bool = True        # false: each worker keeps its own statistics (the paper's comparison)


@dataclass
class ParamStoreConfig:
    store: str = "shared"            # shared: SharedMemoryParams on this host; sharded: the parameter server
    shards: int = 1                  # sharded store only


@dataclass
class A3CNetConfig:
    hidden: tuple[int, ...] = (128,)  # MLP torso for vector observations (A3C CNN for images)
    lstm: bool = False               # A3C only: 256 LSTM cells after the torso


@dataclass
class A3CRayConfig:
    steps_per_call: int = 100        # env steps a worker takes per remote call (progress is counted per call)


@dataclass
class A3CConfig(RunConfig):
    architecture: str = "a3c"
    algo: str = "a3c"                # a3c | nstep_q | onestep_q | sarsa
    actors: int = 16                 # actor-learners
    checkpoint_every: int = 10_000   # global updates between checkpoints
    max_episode_frames: int = 50_000
    rl: A3CAlgoConfig = field(default_factory=A3CAlgoConfig)
    optim: SharedRMSPropConfig = field(default_factory=SharedRMSPropConfig)
    params: ParamStoreConfig = field(default_factory=ParamStoreConfig)
    net: A3CNetConfig = field(default_factory=A3CNetConfig)
    ray: A3CRayConfig = field(default_factory=A3CRayConfig)


# ---------------------------------------------------------------- Ape-X DPG (Horgan et al. 2018, appendix D)

@dataclass
class DPGActorConfig:
    envs_per_actor: int = 1
    sigma: float = 0.3               # Gaussian exploration noise on each action (action units), clipped to bounds
    flush_size: int = 50             # transitions per batch sent to replay
    pull_every: int = 400            # frames between parameter pulls
    max_episode_frames: int = 50_000


@dataclass
class DPGReplayConfig:
    capacity: int = 1_000_000        # kept by prioritized eviction (alpha_evict), not FIFO
    alpha: float = 0.6
    beta: float = 0.4
    alpha_evict: float = -0.4        # eviction samples items with probability ~ p^alpha_evict (low priority first)
    min_size: int = 50_000
    trim_every: int = 100            # learner steps between evictions down to capacity
    compress: bool = False           # kept for the Ape-X runtimes (vector observations are not compressed)
    shards: int = 1
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it


@dataclass
class DPGLearnerConfig:
    batch_size: int = 512            # unstated for DPG; "otherwise as per DQN" (appendix D): Ape-X DQN's 512
    n_step: int = 3                  # "otherwise as per DQN": Ape-X DQN's n
    gamma: float = 0.99
    lr: float = 1e-4                 # Adam, actor and critic
    actor_grad_clip: float = 1.0     # element-wise, on the actor's gradient
    target_update: int = 100         # batches between target-network copies
    prefetch: int = 16


@dataclass
class DPGNetConfig:
    actor_hidden: tuple[int, ...] = (300, 200)
    critic_hidden: tuple[int, ...] = (400, 300)


@dataclass
class ApexDPGConfig(RunConfig):
    architecture: str = "apex-dpg"
    env: str = "HalfCheetah-v5"
    eval_epsilon: float = 0.0        # the noiseless deterministic policy
    actor: DPGActorConfig = field(default_factory=DPGActorConfig)
    replay: DPGReplayConfig = field(default_factory=DPGReplayConfig)
    learner: DPGLearnerConfig = field(default_factory=DPGLearnerConfig)
    net: DPGNetConfig = field(default_factory=DPGNetConfig)
    inline: InlineConfig = field(default_factory=InlineConfig)
    ray: RayConfig = field(default_factory=RayConfig)


# ---------------------------------------------------------------- distributed BA3C (Adamski et al. 2018)

@dataclass
class BA3CWorkerConfig:
    n_sim: int = 10                  # envs per worker, stepped together with one batched forward pass
    t_max: int = 5                   # steps per env before its n-step returns are computed (BA3C's local_time_max)
    batch_size: int = 32             # bs: data points (state, action, n-step return) per gradient
    max_episode_frames: int = 50_000


@dataclass
class BA3CAlgoConfig:
    gamma: float = 0.99
    entropy_beta: float = 0.01
    value_coef: float = 0.5
    grad_clip: float = 40.0          # global gradient-norm clip on each worker's gradient
    reward_scale: float = 1.0        # rewards are multiplied by this for learning only (reported returns are raw)


@dataclass
class BA3CAdamConfig:
    lr: float = 1e-3
    eps: float = 1e-8                # the paper's table; it used 1e-3 for Pong
    beta1: float = 0.8
    beta2: float = 0.75
    anneal: bool = False             # lr linearly to 0 over max_frames, as A3C does; the paper's BA3C keeps it constant


@dataclass
class BA3CSyncConfig:
    mode: str = "sync"               # sync: the chief applies a round's mean; async: each push on arrival
    fraction: float = 0.9            # sync: share of the workers whose gradients close a round


@dataclass
class BA3CPSConfig:
    shards: int = 4                  # ps: parameter-server shards


@dataclass
class BA3CNetConfig:
    hidden: tuple[int, ...] = (128,)  # the fully connected layer (256: the paper's initial model); MLP for vectors


@dataclass
class BA3CRayConfig:
    rounds_per_call: int = 10        # gradients a worker computes per remote call (progress is counted per call)


@dataclass
class BA3CConfig(RunConfig):
    architecture: str = "ba3c"
    actors: int = 64                 # n workers (the paper's final setup)
    checkpoint_every: int = 1000     # rounds (global steps) between checkpoints
    eval_every: int = 1000           # rounds between greedy evaluations with frozen parameters (ray)
    worker: BA3CWorkerConfig = field(default_factory=BA3CWorkerConfig)
    rl: BA3CAlgoConfig = field(default_factory=BA3CAlgoConfig)
    optim: BA3CAdamConfig = field(default_factory=BA3CAdamConfig)
    sync: BA3CSyncConfig = field(default_factory=BA3CSyncConfig)
    ps: BA3CPSConfig = field(default_factory=BA3CPSConfig)
    net: BA3CNetConfig = field(default_factory=BA3CNetConfig)
    ray: BA3CRayConfig = field(default_factory=BA3CRayConfig)


# Evaluation protocols (every one: up to 30 no-op starts on Atari, unclipped game scores). Human starts
# cannot be offered: the papers' start states were never published.
EVAL_PROTOCOLS: dict[str, dict[str, Any]] = {
    "apex": {"eval_epsilon": 0.001, "eval_max_frames": 108_000},  # Ape-X: 30 minutes of play per episode
    "dqn": {"eval_epsilon": 0.05, "eval_episodes": 30, "eval_max_frames": 18_000},  # DQN and Gorila: 5 minutes
}

ARCHITECTURES: dict[str, type] = {"apex": ApexConfig, "gorila": GorilaConfig, "a3c": A3CConfig, "ba3c": BA3CConfig,
                                  "apex-dpg": ApexDPGConfig}

# name -> (architecture, source, overrides). Defaults of the dataclasses are the paper's values.
PRESETS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "apex-atari": ("apex", "Horgan et al. 2018, sec. 4.1 and appendix C (the defaults): centered RMSProp by "
                   "TensorFlow's rule (eps 1.5e-7 inside the square root, mean square from 1)", {}),
    "apex-atari-fast": ("apex", "distrl: Ape-X for a ~20-minute Atari run on one machine with a GPU (bench/pong.py "
                        "sets actors and shards from the cores). Kept from the paper: batch 512, n=3, double Q, "
                        "dueling, priorities 0.6/0.4, per-actor epsilons 0.4^(1+7i/(N-1)), grad clip 40. Changed: "
                        "8 envs per actor (one batched forward pass), replay 1M with learning from 20k (the paper's "
                        "2M and 50k are sized for days), Adam 2.5e-4 with Huber loss (4x the paper's 6.25e-5 for "
                        "~30-60 updates/s instead of days of them), targets every 1,000 batches (the paper's 2,500 "
                        "would refresh ~20 times in the run), 4 samples per insert as a ceiling on the replay "
                        "ratio, 4 replay shards (inflating 512 frames is the sampling cost)", {
        "actors": 10, "max_frames": 200_000_000, "log_every_s": 10.0, "checkpoint_every": 5_000,
        "eval_every": 1_000, "eval_episodes": 8, "torch_threads": 1,
        "actor.envs_per_actor": 8,
        "replay.capacity": 1_000_000, "replay.min_size": 20_000, "replay.shards": 4,
        "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber", "learner.target_update": 1_000,
        "ray.samples_per_insert": 4.0,
    }),
    "apex-cartpole": ("apex", "distrl: small values that solve CartPole-v1 in 60k frames on one core", {
        "actors": 4, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.pull_every": 50, "actor.flush_size": 50,
        # A 20k FIFO and targets every 50 batches: seeds 1-5 gave 495-500 at 60k frames inline, where
        # 100k and 100 gave seed 1 294.5 (and 500 on earlier versions of the code: it was at the edge).
        "replay.capacity": 20_000, "replay.min_size": 1_000, "replay.compress": False,
        "learner.batch_size": 64, "learner.lr": 1e-3, "learner.optimizer": "adam",
        "learner.target_update": 50, "learner.grad_clip": 10.0, "learner.loss": "huber",
        "net.hidden": (128, 128), "inline.actor_steps": 4, "inline.updates_per_round": 4,
        # On a 2-core machine free-running actors starve the learner; hold the inline ratio instead.
        "ray.samples_per_insert": 16.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "gorila-atari": ("gorila", "Nair et al. 2015 (the defaults): 100 bundles, 31 shards, AdaGrad, target every "
                     "60,000 global updates, epsilon 1 -> 0.1 over 1M global updates; DQN's evaluation (epsilon "
                     "0.05, 30 episodes of up to 5 minutes, no-op starts)", {"eval_protocol": "dqn"}),
    "gorila-cartpole": ("gorila", "distrl: 1-step DQN values that solve CartPole-v1 with 2 bundles in 80k frames "
                        "(Adam on the server: AdaGrad 0.01 reached 283 in a probe)", {
        "actors": 2, "max_frames": 80_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.epsilon_end": 0.04, "actor.epsilon_updates": 4000, "actor.pull_every_steps": 1,
        "actor.flush_size": 4,
        "replay.capacity": 100_000, "replay.min_size": 1000, "replay.compress": False,
        "learner.batch_size": 128, "learner.target_update": 256, "learner.grad_clip": 10.0,
        "ps.shards": 2, "ps.optimizer": "adam", "ps.lr": 1e-3, "ps.staleness_bound": 20,
        "net.hidden": (128, 128), "bundle.actor_steps": 4, "bundle.updates": 2,
    }),
    "a3c-atari": ("a3c", "Mnih et al. 2016 (the defaults): 16 actor-learners, t_max 5, shared RMSProp "
                  "(decay 0.99, eps 0.1, eps inside the square root), lr 7e-4 annealed linearly to 0 over the "
                  "run (optim.lr_sample=loguniform draws it as the paper's sweeps did), entropy 0.01, the A3C "
                  "CNN for all four methods", {}),
    "a3c-cartpole": ("a3c", "distrl: A3C values for CartPole-v1 with 2 workers", {
        "optim.anneal": False,  # measured at a constant rate (a3c-cartpole annealed over 200k frames: 142, not 499)
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        # rewards / 10 keep the shared torso's value targets small (unscaled, A3C collapsed to ~15 at
        # 200k frames on Ray); with them lr 2e-3 reached 500 with seeds 1 and 2
        "optim.lr": 2e-3, "rl.reward_scale": 0.1, "net.hidden": (128,), "ray.steps_per_call": 100,
    }),
    "nstep-q-cartpole": ("a3c", "distrl: n-step Q values for CartPole-v1 with 2 workers", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 4000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-cartpole": ("a3c", "distrl: one-step Q values for CartPole-v1 with 2 workers", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-cartpole": ("a3c", "distrl: one-step Sarsa values for CartPole-v1 with 2 workers", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "a3c-pendulum": ("a3c", "distrl: A3C with a Gaussian policy for Pendulum-v1; entropy 0.01, not the paper's 1e-4 "
                     "(with 1e-4 the variance collapsed and the mean stuck at a bound), gamma 0.9, rewards / 8", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "actors": 2, "max_frames": 300_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.entropy_beta": 0.01, "rl.gamma": 0.9,
        "rl.reward_scale": 0.125, "eval_episodes": 10,
    }),
    "apex-dpg-mujoco": ("apex-dpg", "Horgan et al. 2018, appendix D (the defaults): 64 actors on a cluster, Adam 1e-4, "
                        "targets every 100 batches, sigma 0.3, prioritized eviction; batch 512 and n=3 are "
                        "Ape-X DQN's (the paper states no batch for DPG: 'otherwise as per DQN')", {"actors": 64}),
    "apex-dpg-pendulum": ("apex-dpg", "distrl: Ape-X DPG values for Pendulum-v1 with 2 actors (on Ray, 64 samples per "
                          "insert, the inline ratio: with 32, 2 of 5 seed-1 chaos runs ended near -940)", {
        "actors": 2, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000, "eval_episodes": 10,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.capacity": 100_000, "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4, "inline.updates_per_round": 4,
        "ray.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "apex-dpg-small": ("apex-dpg", "distrl: apex-dpg-pendulum's learning values (Adam 1e-3, batch 128, learning from "
                       "1,000 transitions, 64 samples per insert on Ray) for MuJoCo-class tasks with a few actors, "
                       "the default below 32 actors; on HalfCheetah-v5 with 2 actors they gave greedy 1,259 at 100k "
                       "frames (BENCHMARKS.md); 1M frames, evaluated every 2,500 updates", {
        "actors": 2, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 5000,
        "eval_every": 2500, "eval_episodes": 5,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4, "inline.updates_per_round": 4,
        "ray.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "ba3c-atari": ("ba3c", "Adamski et al. 2018, table 1 (the defaults): 64 workers, n_sim 10, bs 32, 4 parameter "
                   "servers, Adam lr 1e-3 eps 1e-8 betas 0.8/0.75, sync with 90% of the workers, 128-unit layer", {}),
    "ba3c-cartpole": ("ba3c", "distrl: BA3C values for CartPole-v1 with 2 workers (rewards / 10 and lr 2e-3: "
                      "500 with seeds 1-3 inline; the paper's lr 1e-3 unscaled reached 210 at 200k frames)", {
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 500, "eval_every": 1000,
        "eval_episodes": 10, "ps.shards": 2, "net.hidden": (128,), "optim.lr": 2e-3, "rl.reward_scale": 0.1,
        # annealed: at a constant 2e-3, 2 of 8 chaos runs fell from 500 to 240 and 11 in the last 20k frames
        "optim.anneal": True,
    }),

    # ---- MinAtar (Young & Tian 2019): 10x10 frames, the MinAtar network, sized for 2 workers on 2 cores.
    # The paper's DQN: batch 32, replay 100k, targets every 1,000 updates, centered RMSProp 2.5e-4,
    # epsilon 1 -> 0.1 over 100k frames, replay start 5,000, gamma 0.99, one update per frame.
    "apex-minatar": ("apex", "Ape-X on MinAtar with 2 actors x 4 envs (Ray): from the MinAtar paper's DQN, replay "
                     "100k, replay start 5,000, gamma 0.99, Huber loss; Ape-X's n=3, double Q, dueling, priorities "
                     "(0.6/0.4), per-env epsilons base^(1+7i/7) over the 8 envs with base 0.1 (the MinAtar DQN's "
                     "final epsilon; with Ape-X's 0.4 the short exploratory episodes made most of the training "
                     "mean: 8-10 at 800k frames while greedy play scored 17.7); distrl: batch 128, Adam 2.5e-4 "
                     "(the learner does ~100 updates/s on its core on Ray), targets every 500 batches, 8 samples "
                     "per insert", {
        # 1.5M frames: about 15 minutes on 2 cores (1.5-1.8k frames/s)
        "actors": 2, "max_frames": 1_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5_000, "eval_episodes": 10,
        "actor.envs_per_actor": 4, "actor.epsilon_base": 0.1, "actor.pull_every": 400, "actor.flush_size": 50,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "learner.batch_size": 128, "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber",
        "learner.grad_clip": 10.0, "learner.target_update": 500,
        "inline.actor_steps": 4, "inline.updates_per_round": 1,
        "ray.samples_per_insert": 8.0, "ray.steps_per_call": 100, "ray.publish_every": 10,
    }),
    "gorila-minatar": ("gorila", "Gorila on MinAtar with 2 bundles: the MinAtar paper's DQN where it fits (replay "
                       "100k per bundle, replay start 5,000, gamma 0.99, Huber loss, epsilon annealed over 100k "
                       "frames); distrl: final epsilon 0.01 (at the DQN's 0.1 Breakout's training episodes scored 7 "
                       "after 13 minutes while greedy play scored 11-13), batch 128 every 16 agent steps per bundle "
                       "(DQN's 8 samples per step with a quarter of the parameter-server round trips: 32 every 4 "
                       "steps ran at 450 frames/s on 2 cores, this at 1,500), n=3 and double Q as apex-minatar "
                       "(Gorila's DQN is one-step), Adam 2.5e-4 on 2 shards (AdaGrad's rate is unstated in the "
                       "paper), targets every 500 global updates, actors pull every 16 steps; 2.7M frames (about 30 "
                       "minutes on 2 cores)", {
        "actors": 2, "max_frames": 2_700_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5_000, "eval_episodes": 10,
        # 100k frames: 2 bundles x 50k steps, one global update per 16 steps of a bundle
        "actor.epsilon_end": 0.01, "actor.epsilon_updates": 6_250, "actor.flush_size": 4,
        "actor.pull_every_steps": 16,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "learner.batch_size": 128, "learner.n_step": 3, "learner.double_q": True, "learner.target_update": 500,
        "learner.grad_clip": 10.0,
        "ps.shards": 2, "ps.optimizer": "adam", "ps.lr": 2.5e-4, "ps.staleness_bound": 20,
        "bundle.actor_steps": 16, "bundle.updates": 1,
    }),
    "a3c-minatar": ("a3c", "A3C on MinAtar with 2 workers: Mnih et al. 2016's t_max 5, entropy 0.01, shared RMSProp "
                    "(decay 0.99, eps 0.1) with the rate annealed linearly to 0 over the run, on the MinAtar network "
                    "(policy and value heads on its 128 units); distrl: lr 1e-2, the top of the paper's "
                    "LogUniform(1e-4, 1e-2) (distrl's loss is the mean over a rollout's steps where the paper sums "
                    "them; at 1e-3 Breakout stayed near 1.5 after 5 minutes, at 1e-2 its greedy play scored 9.2), "
                    "4.5M frames (about 30 minutes on 2 cores)", {
        "actors": 2, "max_frames": 4_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 50_000, "eval_episodes": 10, "optim.lr": 1e-2, "optim.anneal": True,
    }),
    "nstep-q-minatar": ("a3c", "n-step Q on MinAtar with 2 workers: Mnih et al. 2016's t_max 5, shared RMSProp, "
                        "per-worker final epsilons; distrl: lr 1e-3, targets every 10k global frames, epsilon over 100k "
                        "frames (the MinAtar paper's DQN anneal)", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-minatar": ("a3c", "one-step Q on MinAtar with 2 workers: as nstep-q-minatar", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-minatar": ("a3c", "one-step Sarsa on MinAtar with 2 workers: as nstep-q-minatar", {
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "ba3c-minatar": ("ba3c", "BA3C on MinAtar with 2 workers: Adamski et al. 2018's t_max 5, Adam (betas 0.8/0.75, "
                     "eps 1e-8), sync 0.9, entropy 0.01, on the MinAtar network; distrl: n_sim 16 and bs 64 (the "
                     "paper's 10 and 32 ran at 2,600 frames/s on 2 cores, a round's round trips being the limit; 16 "
                     "and 64 at 4,400-5,200), lr 3e-3 annealed to 0 over the run, 2 shards; 7.5M frames (about 30 "
                     "minutes; Breakout 10 at 6 minutes, after 5 minutes near 6 as lr 5e-4 and 1e-3 also were)", {
        "actors": 2, "max_frames": 7_500_000, "log_every_s": 10.0, "checkpoint_every": 2_000, "eval_every": 2_000,
        "eval_episodes": 10, "ps.shards": 2, "optim.lr": 3e-3, "optim.anneal": True,
        "worker.n_sim": 16, "worker.batch_size": 64,
    }),
}


PAPER_SCALE_ACTORS = 32  # from this many actors a continuous-control run gets the paper's values


def choose_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> tuple[str, str]:
    """The preset a run gets when none is named, and why (the first line `distrl train` prints): the
    paper's values on Atari, MinAtar's on MinAtar, small ones elsewhere, and for Ape-X DPG the scale
    of the run (its actor count: the paper's values need 64 actors and many millions of frames)."""
    from distrl.envs import continuous_actions, is_atari, is_minatar
    q_method = architecture == "a3c" and algo in ("nstep_q", "onestep_q", "sarsa")
    if is_minatar(env_id) and architecture != "apex-dpg":
        name = f"{algo.replace('_', '-')}-minatar" if q_method else f"{architecture}-minatar"
        return name, "the default for MinAtar ids"
    if architecture == "apex-dpg":
        if env_id.startswith("Pendulum"):
            return "apex-dpg-pendulum", "the default for Pendulum"
        if actors is not None and actors >= PAPER_SCALE_ACTORS:
            return "apex-dpg-mujoco", f"{actors} actors: the paper's values"
        n = PRESETS["apex-dpg-small"][2]["actors"] if actors is None else actors
        return "apex-dpg-small", (f"{n} actors; the paper's values are apex-dpg-mujoco (chosen from "
                                  f"{PAPER_SCALE_ACTORS} actors, or with --preset apex-dpg-mujoco)")
    if is_atari(env_id):
        return f"{architecture}-atari", "the paper's values, the default for Atari ids"
    if architecture == "a3c" and continuous_actions(env_id):
        return "a3c-pendulum", "the default for continuous actions (the paper's Gaussian policy, small-run values)"
    name = f"{algo.replace('_', '-')}-cartpole" if q_method else f"{architecture}-cartpole"
    paper = "a3c-atari" if architecture == "a3c" else f"{architecture}-atari"
    return name, f"small-run values, the default for non-Atari ids; the paper's are {paper}"


def default_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> str:
    return choose_preset(architecture, env_id, algo, actors)[0]


def learning_start_frames(cfg: Any) -> int:
    """Env frames before the first learner update, at the earliest: replay-based learners wait for
    replay.min_size transitions (Gorila's local tables: in every bundle); A3C and BA3C learn from
    their first rollout."""
    replay = getattr(cfg, "replay", None)
    if replay is None or not hasattr(replay, "min_size"):
        return 0
    from distrl.envs import is_atari
    tables = cfg.actors if cfg.architecture == "gorila" and replay.mode == "local" else 1
    return replay.min_size * tables * (4 if is_atari(cfg.env) else 1)


def describe_preset(cfg: Any, named: bool, actors: int | None = None) -> str:
    """The first line of a new run: its preset and why, and a warning when the replay would not start
    learning within the first 10% of the run's frames (the paper's values on a short run)."""
    if named:
        line = f"preset {cfg.preset}: named with --preset"
    else:
        algo = getattr(cfg, "algo", "")
        line = f"preset {cfg.preset}: {choose_preset(cfg.architecture, cfg.env, algo, actors)[1]}"
    start = learning_start_frames(cfg)
    if start > 0.1 * cfg.max_frames:
        line += (f"\nnote: learning starts after {start:,} frames (replay.min_size {cfg.replay.min_size:,}), "
                 f"{start / cfg.max_frames:.0%} of this run's {cfg.max_frames:,}: give --max-frames "
                 f"{10 * start:,} or more, --set replay.min_size=..., or a smaller preset")
    return line


# ---------------------------------------------------------------- building and validation

def build_config(architecture: str, env: str, preset: str | None = None,
                 overrides: dict[str, Any] | None = None) -> Any:
    """Defaults, then the preset, then explicit overrides (already typed or strings), then checks."""
    if architecture not in ARCHITECTURES:
        raise ConfigError(f"unknown architecture {architecture!r}: choose one of {', '.join(ARCHITECTURES)}")
    cfg = ARCHITECTURES[architecture]()
    cfg.env = env
    overrides = overrides or {}
    actors = int(overrides["actors"]) if "actors" in overrides else None
    preset = preset or default_preset(architecture, env, str(overrides.get("algo", "")), actors)
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)} (see `distrl presets`)")
    arch, _, values = PRESETS[preset]
    if arch != architecture:
        raise ConfigError(f"preset {preset!r} is for {arch!r}, not {architecture!r}: see `distrl presets`")
    cfg.preset = preset
    named = {**values, **(overrides or {})}
    protocol = str(named.get("eval_protocol", ""))  # named by the preset or by --set: its values come first
    if protocol and protocol not in EVAL_PROTOCOLS:
        raise ConfigError(f"invalid value {protocol!r} for eval_protocol: accepted values are "
                          f"{', '.join(EVAL_PROTOCOLS)}")
    for key, value in {**EVAL_PROTOCOLS.get(protocol, {}), **named}.items():
        set_value(cfg, key, value)
    _draw_lr(cfg, overrides or {})  # a preset's own optim.lr gives way to the draw
    validate(cfg)
    return cfg


LR_SAMPLES = {"loguniform": (1e-4, 1e-2)}  # Mnih et al. 2016: each run's rate from LogUniform(1e-4, 1e-2)


def _draw_lr(cfg: Any, overrides: dict[str, Any]) -> None:
    """A3C's sampled learning rate, drawn once from the run's seed into optim.lr, so config.json (and
    --resume) keep the value drawn."""
    optim = getattr(cfg, "optim", None)
    sample = getattr(optim, "lr_sample", "")
    if not sample:
        return
    if sample not in LR_SAMPLES:
        raise ConfigError(f"invalid value {sample!r} for optim.lr_sample: accepted values are "
                          f"{', '.join(LR_SAMPLES)} (or empty for a fixed optim.lr)")
    if "optim.lr" in overrides:
        raise ConfigError("optim.lr_sample draws optim.lr: set one of them, not both")
    low, high = LR_SAMPLES[sample]
    rng = np.random.default_rng([cfg.seed, 0x1a])
    optim.lr = float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _fields(obj: Any) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(obj)}


def leaf_keys(obj: Any, prefix: str = "") -> list[str]:
    keys = []
    for name in _fields(obj):
        value = getattr(obj, name)
        keys += leaf_keys(value, f"{prefix}{name}.") if dataclasses.is_dataclass(value) else [prefix + name]
    return keys


def set_value(cfg: Any, key: str, value: Any) -> None:
    path = key.split(".")
    target = cfg
    for part in path[:-1]:
        sub = getattr(target, part, None) if part in _fields(target) else None
        if not dataclasses.is_dataclass(sub):
            raise ConfigError(f"unknown config key {key!r}: valid keys are {', '.join(leaf_keys(cfg))}")
        target = sub
    name = path[-1]
    fields = _fields(target)
    if name not in fields or dataclasses.is_dataclass(getattr(target, name)):
        raise ConfigError(f"unknown config key {key!r}: valid keys are {', '.join(leaf_keys(cfg))}")
    hint = typing.get_type_hints(type(target))[name]
    setattr(target, name, parse_value(key, hint, value))


def parse_value(key: str, hint: Any, value: Any) -> Any:
    """Parse a string (or check a Python value) against the field's declared type."""
    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if hint is int:
            if isinstance(value, bool):
                raise ValueError
            number = float(value) if isinstance(value, str) else value
            if float(number) != int(number):
                raise ValueError
            return int(number)
        if hint is float:
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if hint is str:
            return str(value)
        if typing.get_origin(hint) is tuple:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(int(str(v).strip()) for v in items if str(v).strip())
    except (TypeError, ValueError):
        pass
    else:
        raise ConfigError(f"config key {key!r} has an unsupported type {hint}")
    name = getattr(hint, "__name__", str(hint))
    example = {"bool": "true or false", "int": "a whole number like 4", "float": "a number like 0.5"}.get(
        name, "comma-separated whole numbers like 128,128")
    raise ConfigError(f"bad value {value!r} for {key}: expected {example}")


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validate_ray(ray: RayConfig) -> None:
    """Ape-X's and Ape-X DPG's ray settings: both run on the same driver."""
    _check(ray.steps_per_call >= 1, "ray.steps_per_call", ray.steps_per_call, "whole numbers >= 1")
    _check(ray.max_inflight_adds >= 1, "ray.max_inflight_adds", ray.max_inflight_adds, "whole numbers >= 1")
    _check(not ray.actor_node or _is_ip(ray.actor_node), "ray.actor_node", ray.actor_node,
           "the IP address of a node of the Ray cluster, or empty")
    _check(ray.publish_every >= 1, "ray.publish_every", ray.publish_every, "whole numbers >= 1")
    _check(ray.samples_per_insert >= 0, "ray.samples_per_insert", ray.samples_per_insert,
           "numbers >= 0 (0: actors never wait for the learner)")


def _check(ok: bool, key: str, value: Any, accepted: str) -> None:
    if not ok:
        raise ConfigError(f"invalid value {value!r} for {key}: accepted values are {accepted}")


def validate(cfg: RunConfig) -> None:
    """The checks every run shares, then the architecture's own."""
    c = cfg
    _check(c.runtime in RUNTIMES, "runtime", c.runtime, " or ".join(RUNTIMES))
    _check(c.actors >= 1, "actors", c.actors, "whole numbers >= 1")
    _check(c.max_frames >= 1, "max_frames", c.max_frames, "whole numbers >= 1")
    _check(c.seed >= 0, "seed", c.seed, "whole numbers >= 0")
    _check(c.log_every_s > 0, "log_every_s", c.log_every_s, "numbers > 0")
    _check(c.checkpoint_every >= 1, "checkpoint_every", c.checkpoint_every, "whole numbers >= 1")
    _check(c.eval_episodes >= 0, "eval_episodes", c.eval_episodes, "whole numbers >= 0")
    _check(0 <= c.eval_epsilon <= 1, "eval_epsilon", c.eval_epsilon, "numbers in [0, 1]")
    _check(c.eval_protocol in EVAL_PROTOCOLS, "eval_protocol", c.eval_protocol, ", ".join(EVAL_PROTOCOLS))
    _check(c.eval_max_frames >= 4, "eval_max_frames", c.eval_max_frames, "whole numbers >= 4 (emulator frames)")
    _check(c.eval_every >= 0, "eval_every", c.eval_every, "whole numbers >= 0 (0: only at the end)")
    _check(c.torch_threads >= 0, "torch_threads", c.torch_threads, "whole numbers >= 0 (0: automatic)")
    for name in ("hidden", "actor_hidden", "critic_hidden"):
        sizes = getattr(c.net, name, (1,))
        _check(len(sizes) >= 1 and min(sizes) >= 1, f"net.{name}", sizes,
               "comma-separated layer sizes >= 1, e.g. 128,128")
    {"apex": _validate_apex, "gorila": _validate_gorila, "a3c": _validate_a3c,
     "ba3c": _validate_ba3c, "apex-dpg": _validate_apex_dpg}[c.architecture](c)


def _validate_dqn_learner(le: Any) -> None:
    _check(le.batch_size >= 1, "learner.batch_size", le.batch_size, "whole numbers >= 1")
    _check(le.n_step >= 1, "learner.n_step", le.n_step, "whole numbers >= 1")
    _check(0 <= le.gamma <= 1, "learner.gamma", le.gamma, "numbers in [0, 1]")
    _check(le.loss in ("mse", "huber"), "learner.loss", le.loss, "mse or huber")
    _check(le.grad_clip > 0, "learner.grad_clip", le.grad_clip, "numbers > 0")
    _check(le.target_update >= 1, "learner.target_update", le.target_update, "whole numbers >= 1")


def _validate_apex(c: ApexConfig) -> None:
    a = c.actor
    _check(a.envs_per_actor >= 1, "actor.envs_per_actor", a.envs_per_actor, "whole numbers >= 1")
    _check(0 <= a.epsilon_base <= 1, "actor.epsilon_base", a.epsilon_base, "numbers in [0, 1]")
    _check(a.epsilon_alpha >= 0, "actor.epsilon_alpha", a.epsilon_alpha, "numbers >= 0")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.pull_every >= 1, "actor.pull_every", a.pull_every, "whole numbers >= 1")
    _check(a.max_episode_frames >= 1, "actor.max_episode_frames", a.max_episode_frames, "whole numbers >= 1")
    r = c.replay
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.alpha >= 0, "replay.alpha", r.alpha, "numbers >= 0")
    _check(0 <= r.beta <= 1, "replay.beta", r.beta, "numbers in [0, 1]")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    _check(r.trim_every >= 1, "replay.trim_every", r.trim_every, "whole numbers >= 1")
    _check(r.shards >= 1, "replay.shards", r.shards, "whole numbers >= 1")
    _validate_ray(c.ray)
    le = c.learner
    _validate_dqn_learner(le)
    _check(le.optimizer in ("rmsprop_centered", "adam"), "learner.optimizer", le.optimizer,
           "rmsprop_centered or adam")
    _check(le.lr > 0, "learner.lr", le.lr, "numbers > 0")
    _check(0 <= le.rms_decay < 1, "learner.rms_decay", le.rms_decay, "numbers in [0, 1)")
    _check(le.rms_eps > 0, "learner.rms_eps", le.rms_eps, "numbers > 0")
    _check(le.prefetch >= 0, "learner.prefetch", le.prefetch, "whole numbers >= 0")
    _check(c.inline.actor_steps >= 1, "inline.actor_steps", c.inline.actor_steps, "whole numbers >= 1")
    _check(c.inline.updates_per_round >= 1, "inline.updates_per_round", c.inline.updates_per_round,
           "whole numbers >= 1")


def _validate_gorila(c: GorilaConfig) -> None:
    from distrl.params.param_server import OPTIMIZERS
    a = c.actor
    _check(0 <= a.epsilon_end <= a.epsilon_start <= 1, "actor.epsilon_start/epsilon_end",
           (a.epsilon_start, a.epsilon_end), "numbers with 0 <= epsilon_end <= epsilon_start <= 1")
    _check(a.epsilon_updates >= 1, "actor.epsilon_updates", a.epsilon_updates, "whole numbers >= 1")
    _check(a.pull_every_steps >= 1, "actor.pull_every_steps", a.pull_every_steps, "whole numbers >= 1")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.max_episode_frames >= 1, "actor.max_episode_frames", a.max_episode_frames, "whole numbers >= 1")
    r = c.replay
    _check(r.mode in ("local", "global"), "replay.mode", r.mode, "local (one table per bundle) or global")
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    le = c.learner
    _validate_dqn_learner(le)
    _check(le.pull_every_steps >= 1, "learner.pull_every_steps", le.pull_every_steps, "whole numbers >= 1")
    _check(le.outlier_k > 0, "learner.outlier_k", le.outlier_k, "numbers > 0")
    _check(le.outlier_warmup >= 2, "learner.outlier_warmup", le.outlier_warmup, "whole numbers >= 2")
    p = c.ps
    _check(p.shards >= 1, "ps.shards", p.shards, "whole numbers >= 1")
    _check(p.optimizer in OPTIMIZERS, "ps.optimizer", p.optimizer, " or ".join(OPTIMIZERS))
    _check(p.lr > 0, "ps.lr", p.lr, "numbers > 0")
    _check(p.staleness_bound >= -1, "ps.staleness_bound", p.staleness_bound, "whole numbers >= 0, or -1 for none")
    b = c.bundle
    _check(b.actor_steps >= 1, "bundle.actor_steps", b.actor_steps, "whole numbers >= 1")
    _check(b.updates >= 0, "bundle.updates", b.updates, "whole numbers >= 0")
    _check(b.rounds_per_call >= 1, "bundle.rounds_per_call", b.rounds_per_call, "whole numbers >= 1")


def _validate_a3c(c: A3CConfig) -> None:
    _check(c.algo in A3C_ALGOS, "algo", c.algo, " or ".join(A3C_ALGOS))
    _check(c.max_episode_frames >= 1, "max_episode_frames", c.max_episode_frames, "whole numbers >= 1")
    r = c.rl
    _check(r.t_max >= 1, "rl.t_max", r.t_max, "whole numbers >= 1")
    _check(0 <= r.gamma <= 1, "rl.gamma", r.gamma, "numbers in [0, 1]")
    _check(r.entropy_beta >= 0, "rl.entropy_beta", r.entropy_beta, "numbers >= 0")
    _check(r.value_coef >= 0, "rl.value_coef", r.value_coef, "numbers >= 0")
    _check(r.reward_scale > 0, "rl.reward_scale", r.reward_scale, "numbers > 0")
    _check(r.grad_clip > 0, "rl.grad_clip", r.grad_clip, "numbers > 0")
    _check(r.target_update >= 1, "rl.target_update", r.target_update, "whole numbers >= 1")
    _check(r.epsilon_anneal_frames >= 1, "rl.epsilon_anneal_frames", r.epsilon_anneal_frames, "whole numbers >= 1")
    o = c.optim
    _check(o.lr > 0, "optim.lr", o.lr, "numbers > 0")
    _check(0 <= o.decay < 1, "optim.decay", o.decay, "numbers in [0, 1)")
    _check(o.eps > 0, "optim.eps", o.eps, "numbers > 0")
    _check(c.params.store in ("shared", "sharded"), "params.store", c.params.store,
           "shared (one host, shared memory) or sharded (the parameter server)")
    _check(c.params.shards >= 1, "params.shards", c.params.shards, "whole numbers >= 1")
    _check(not (c.net.lstm and c.algo != "a3c"), "net.lstm", c.net.lstm, "false unless algo is a3c")
    _check(c.ray.steps_per_call >= 1, "ray.steps_per_call", c.ray.steps_per_call, "whole numbers >= 1")


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a config saved as config.json (for --resume), checking every key again."""
    if not isinstance(data, dict) or data.get("architecture") not in ARCHITECTURES:
        raise ConfigError("config.json does not hold a distrl config: the run directory is not a distrl run")
    cfg = ARCHITECTURES[data["architecture"]]()

    def walk(prefix: str, values: dict[str, Any]) -> None:
        for k, v in values.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                set_value(cfg, prefix + k, v)

    walk("", data)
    validate(cfg)
    return cfg


def dumps(cfg: Any) -> str:
    return json.dumps(to_dict(cfg), indent=2, sort_keys=False)


def _validate_ba3c(c: BA3CConfig) -> None:
    w = c.worker
    _check(w.n_sim >= 1, "worker.n_sim", w.n_sim, "whole numbers >= 1")
    _check(w.t_max >= 1, "worker.t_max", w.t_max, "whole numbers >= 1")
    _check(w.batch_size >= 1, "worker.batch_size", w.batch_size, "whole numbers >= 1")
    _check(w.max_episode_frames >= 1, "worker.max_episode_frames", w.max_episode_frames, "whole numbers >= 1")
    r = c.rl
    _check(0 <= r.gamma <= 1, "rl.gamma", r.gamma, "numbers in [0, 1]")
    _check(r.entropy_beta >= 0, "rl.entropy_beta", r.entropy_beta, "numbers >= 0")
    _check(r.value_coef >= 0, "rl.value_coef", r.value_coef, "numbers >= 0")
    _check(r.grad_clip > 0, "rl.grad_clip", r.grad_clip, "numbers > 0")
    _check(r.reward_scale > 0, "rl.reward_scale", r.reward_scale, "numbers > 0")
    o = c.optim
    _check(o.lr > 0, "optim.lr", o.lr, "numbers > 0")
    _check(o.eps > 0, "optim.eps", o.eps, "numbers > 0")
    _check(0 <= o.beta1 < 1, "optim.beta1", o.beta1, "numbers in [0, 1)")
    _check(0 <= o.beta2 < 1, "optim.beta2", o.beta2, "numbers in [0, 1)")
    _check(c.sync.mode in ("sync", "async"), "sync.mode", c.sync.mode, "sync or async")
    _check(0 < c.sync.fraction <= 1, "sync.fraction", c.sync.fraction, "numbers in (0, 1]")
    _check(c.ps.shards >= 1, "ps.shards", c.ps.shards, "whole numbers >= 1")
    _check(c.ray.rounds_per_call >= 1, "ray.rounds_per_call", c.ray.rounds_per_call, "whole numbers >= 1")


def _validate_apex_dpg(c: ApexDPGConfig) -> None:
    a = c.actor
    _check(a.envs_per_actor >= 1, "actor.envs_per_actor", a.envs_per_actor, "whole numbers >= 1")
    _check(a.sigma >= 0, "actor.sigma", a.sigma, "numbers >= 0")
    _check(a.flush_size >= 1, "actor.flush_size", a.flush_size, "whole numbers >= 1")
    _check(a.pull_every >= 1, "actor.pull_every", a.pull_every, "whole numbers >= 1")
    r = c.replay
    _check(r.capacity >= 1, "replay.capacity", r.capacity, "whole numbers >= 1")
    _check(r.alpha >= 0, "replay.alpha", r.alpha, "numbers >= 0")
    _check(0 <= r.beta <= 1, "replay.beta", r.beta, "numbers in [0, 1]")
    _check(r.alpha_evict <= 0, "replay.alpha_evict", r.alpha_evict, "numbers <= 0 (low priorities leave first)")
    _check(r.min_size >= 1, "replay.min_size", r.min_size, "whole numbers >= 1")
    _check(r.trim_every >= 1, "replay.trim_every", r.trim_every, "whole numbers >= 1")
    _check(r.shards >= 1, "replay.shards", r.shards, "whole numbers >= 1")
    le = c.learner
    _check(le.batch_size >= 1, "learner.batch_size", le.batch_size, "whole numbers >= 1")
    _check(le.n_step >= 1, "learner.n_step", le.n_step, "whole numbers >= 1")
    _check(0 <= le.gamma <= 1, "learner.gamma", le.gamma, "numbers in [0, 1]")
    _check(le.lr > 0, "learner.lr", le.lr, "numbers > 0")
    _check(le.actor_grad_clip > 0, "learner.actor_grad_clip", le.actor_grad_clip, "numbers > 0")
    _check(le.target_update >= 1, "learner.target_update", le.target_update, "whole numbers >= 1")
    _validate_ray(c.ray)
    _check(len(c.net.critic_hidden) == 2, "net.critic_hidden", c.net.critic_hidden,
           "two layer sizes (the action joins at the second), e.g. 400,300")
