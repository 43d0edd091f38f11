"""The config tree: one dataclass per section, the papers' hyperparameters as defaults.

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the value
is parsed by the leaf's declared type (config/__init__.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

RUNTIMES = ("inline", "ray")
TRACKERS = ("", "wandb")  # tracking: none beside metrics.csv and TensorBoard, or Weights & Biases (components/tracking.py)


def ranged(default: Any, *, ge=None, gt=None, le=None, lt=None, choices=None, accepted: str = "") -> Any:
    """A leaf with the values it accepts declared beside its default; validate() checks every one and
    names them in its error (`accepted` words them where the bounds alone would not say enough)."""
    return field(default=default, metadata={"range": (ge, gt, le, lt, choices), "accepted": accepted})


def out_of_range(value: Any, meta: dict) -> bool:
    ge, gt, le, lt, choices = meta["range"]
    return ((choices is not None and value not in choices) or (ge is not None and value < ge)
            or (gt is not None and value <= gt) or (le is not None and value > le) or (lt is not None and value >= lt))


def accepted_text(kind: str, meta: dict) -> str:
    """What a declared range accepts, as an error message says it (`kind`: the leaf's type name)."""
    ge, gt, le, lt, choices = meta["range"]
    if meta["accepted"]:
        return meta["accepted"]
    if choices is not None:
        return " or ".join(str(c) for c in choices)
    unit = "whole numbers" if kind == "int" else "numbers"
    low, high = (ge, "[") if ge is not None else (gt, "("), (le, "]") if le is not None else (lt, ")")
    if low[0] is not None and high[0] is not None:
        return f"{unit} in {low[1]}{low[0]}, {high[0]}{high[1]}"
    if low[0] is not None:
        return f"{unit} {'>=' if ge is not None else '>'} {low[0]}"
    return f"{unit} {'<=' if le is not None else '<'} {high[0]}"


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


@dataclass
class ReplayConfig:
    capacity: int = ranged(2_000_000, ge=1)  # soft: trimmed FIFO every `trim_every` learner steps
    alpha: float = ranged(0.6, ge=0)
    beta: float = ranged(0.4, ge=0, le=1)
    min_size: int = ranged(50_000, ge=1)  # learning starts once the table holds this many
    trim_every: int = ranged(100, ge=1)
    compress: bool = True            # compress image observations in the table
    codec: str = ranged("zlib", choices=("zlib", "lz4"))  # how: lz4 inflates ~2.4x faster at about the size (a GPU learner's bound)
    # Atari: keep each frame of the obs/next_obs stacks once (replay/frames.py): ~1/7 of the frames, so raw
    # frames (compress false: nothing to inflate when sampling) fit where raw stacks would not
    share_frames: bool = False
    shards: int = ranged(1, ge=1)  # tables the ray runtime spreads the replay over
    checkpoint: bool = False         # save the replay (compressed) with each checkpoint; restarts and --resume reload it
    # The replay ratio, one value for both placements: on Ray a SampleToInsertRatio limiter (replay/limiters.py)
    # holds the actors to it (0: free-running, as in Ape-X); in one process it sets the learner's batches per
    # round, ratio x the round's transitions / batch_size, fractions carried to the next round (0: one a round).
    samples_per_insert: float = ranged(0.0, ge=0, accepted="numbers >= 0 (0: actors never wait for the learner)")


@dataclass
class LearnerConfig:
    batch_size: int = ranged(512, ge=1)
    n_step: int = ranged(3, ge=1)
    gamma: float = ranged(0.99, ge=0, le=1)
    double_q: bool = True
    loss: str = ranged("mse", choices=("mse", "huber"))  # Ape-X: 1/2 (G - q)^2; "huber" for Nature DQN
    optimizer: str = ranged("rmsprop_centered", choices=("rmsprop_centered", "adam"))  # TensorFlow's centered RMSProp (eps inside the sqrt); or "adam"
    lr: float = ranged(0.00025 / 4, gt=0)
    rms_decay: float = ranged(0.95, ge=0, lt=1)
    rms_eps: float = ranged(1.5e-7, gt=0)
    grad_clip: float = ranged(40.0, ge=0)  # global gradient-norm clip (0: none)
    target_update: int = ranged(2500, ge=1)  # batches between target-network copies
    bf16: bool = False  # bfloat16 autocast in the networks' hidden layers (outputs, targets, loss float32) where the device has bf16 units; float32 elsewhere (not in the paper)
    prefetch: int = ranged(16, ge=0)  # batches a background thread samples ahead (0: sample inline)
    prefetch_threads: int = ranged(1, ge=1)  # sample requests kept in flight to remote replay shards


@dataclass
class NetConfig:
    dueling: bool = True
    hidden: tuple[int, ...] = (512,)  # MLP torso for vector observations (CNN for images)
    factory: str = ""                # a user's network: "factory:module:function" (see distrl.train's network=)


@dataclass
class InlineConfig:
    """How the one-process runtime interleaves components (it has no concurrency to do it for it)."""
    actor_steps: int = ranged(16, ge=1)  # env steps each actor takes per round
    # Deprecated: 0 (the default) follows replay.samples_per_insert. A config.json written before the ratio
    # was one key keeps its fixed count here, so an old run resumes with the same rounds.
    updates_per_round: int = ranged(0, ge=0)


@dataclass
class RayConfig:
    """How the ray runtime batches its calls (no effect inline)."""
    steps_per_call: int = ranged(100, ge=1)  # env steps an actor takes per remote call (progress is counted per call)
    max_inflight_adds: int = ranged(8, ge=1)  # replay adds an actor may have in flight before it waits
    publish_every: int = ranged(10, ge=1)  # learner updates between parameter puts into the object store
    learner_gpus: float = -1         # -1: one GPU if the cluster has one, else 0
    # Each actor's share of a GPU (Ape-X, DQN): its batched forward pass runs there, the envs on its core.
    # 0: on the CPU. With one GPU the shares and learner_gpus must fit in it, e.g. 10 actors x 0.05 + 0.5.
    actor_gpus: float = ranged(0.0, ge=0, le=1)
    actor_node: str = ""             # IP of a node to start the actors on (soft: restarted elsewhere once it is gone)


@dataclass
class RunConfig:
    """What every architecture's run has: the env, the scale, the runtime, the bookkeeping."""
    architecture: str = ""
    architecture_module: str = ""    # the module that registers a non-built-in architecture (imported again on --resume)
    env: str = "ALE/Pong-v5"
    preset: str = ""
    runtime: str = "inline"
    address: str = ""                # ray: join this cluster (also RAY_ADDRESS); empty: start a local one
    # ray: ROLE=IP pairs, comma-separated: start that role's instances on the node with that address (soft:
    # restarted elsewhere once it is gone), e.g. learner=10.0.0.2,replay=10.0.0.2; the roles are the run's own
    nodes: str = ""
    actors: int = ranged(8, ge=1)
    max_frames: int = ranged(50_000_000, ge=1)
    # wall-clock seconds of training in this process (from the roles' start; a resumed run gets its own
    # budget) after which the run stops, saves and evaluates as at max_frames; inf: no limit
    max_seconds: float = ranged(math.inf, gt=0)
    seed: int = ranged(0, ge=0)
    run_dir: str = ""
    log_every_s: float = ranged(5.0, gt=0)
    checkpoint_every: int = ranged(5000, ge=1)  # learner updates (Gorila: global parameter-server updates) between checkpoints
    eval_protocol: str = "apex"      # named values of the three below (EVAL_PROTOCOLS); values set by name win
    eval_episodes: int = ranged(20, ge=0)
    eval_epsilon: float = ranged(0.001, ge=0, le=1)
    max_episode_frames: int = ranged(50_000, ge=1)  # training episode cap in env frames (Atari; other envs keep their own)
    eval_max_frames: int = ranged(108_000, ge=4, accepted="whole numbers >= 4 (emulator frames)")  # evaluation episode cap in emulator frames (Atari only)
    eval_every: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: only at the end)")  # learner updates between evaluations of the latest parameters (0: at the end only)
    stop_return: float = math.inf   # end the run at the first periodic evaluation whose mean return reaches this (RLlib's stop criterion; inf: run to max_frames)
    torch_threads: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: automatic)")  # 0: one thread for small nets (vectors, MinAtar), one per core for Atari stacks
    video_every: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: no videos)")  # evaluations 0, N, 2N, ... record their first episode in RUN_DIR/videos (the video extra)
    tracking: str = ""               # "wandb": metrics, config and evaluation videos to Weights & Biases too (offline without a key)


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


@dataclass
class ParamServerConfig:
    shards: int = ranged(31, ge=1)  # N_param in the paper
    optimizer: str = "adagrad"
    lr: float = ranged(0.01, gt=0)  # not given in the paper: torch's AdaGrad default
    staleness_bound: int = 100       # drop a push whose shard version lags by more (-1: never; unstated in the paper)
    anneal: bool = False             # lr linearly to 0 over the run's expected global updates (not in the paper)


@dataclass
class BundleConfig:
    """How each bundle interleaves its actor and its learner (the same in both runtimes)."""
    actor_steps: int = ranged(4, ge=1)  # agent steps per round
    updates: int = ranged(1, ge=0)  # learner steps per round once the replay holds min_size (DQN: 1 per 4 steps)
    rounds_per_call: int = ranged(25, ge=1)  # ray: rounds a bundle runs per remote call (progress is counted per call)


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


# ---------------------------------------------------------------- A3C family (Mnih et al. 2016)

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
    optim: SharedRMSPropConfig = field(default_factory=SharedRMSPropConfig)
    ps: ParamStoreConfig = field(default_factory=ParamStoreConfig)
    net: A3CNetConfig = field(default_factory=A3CNetConfig)
    ray: A3CRayConfig = field(default_factory=A3CRayConfig)


# ---------------------------------------------------------------- Ape-X DPG (Horgan et al. 2018, appendix D)

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


# ---------------------------------------------------------------- R2D2 (Kapturowski et al. 2019)

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

# ---------------------------------------------------------------- distributed BA3C (Adamski et al. 2018)

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
    rounds_per_call: int = ranged(10, ge=1)  # gradients a worker computes per remote call (progress is counted per call)


@dataclass
class BA3CConfig(RunConfig):
    architecture: str = "ba3c"
    actors: int = ranged(64, ge=1)  # n workers (the paper's final setup)
    checkpoint_every: int = ranged(1000, ge=1)  # rounds (global steps) between checkpoints
    eval_every: int = ranged(1000, ge=0, accepted="whole numbers >= 0 (0: only at the end)")  # rounds between greedy evaluations with frozen parameters (ray)
    worker: BA3CWorkerConfig = field(default_factory=BA3CWorkerConfig)
    rl: BA3CAlgoConfig = field(default_factory=BA3CAlgoConfig)
    optim: BA3CAdamConfig = field(default_factory=BA3CAdamConfig)
    sync: BA3CSyncConfig = field(default_factory=BA3CSyncConfig)
    ps: BA3CPSConfig = field(default_factory=BA3CPSConfig)
    net: BA3CNetConfig = field(default_factory=BA3CNetConfig)
    ray: BA3CRayConfig = field(default_factory=BA3CRayConfig)



# ---------------------------------------------------------------- DQN (Mnih et al. 2015)

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


ARCHITECTURES: dict[str, type] = {"apex": ApexConfig, "gorila": GorilaConfig, "a3c": A3CConfig, "ba3c": BA3CConfig,
                                  "apex-dpg": ApexDPGConfig, "dqn": DQNConfig, "r2d2": R2D2Config}
