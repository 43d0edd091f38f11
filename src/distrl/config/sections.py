"""The sections every architecture's config shares (RunConfig: the env, the scale, the runtime, the
bookkeeping; the Ape-X family's replay, learner and network; the placements' sizes), the papers'
hyperparameters as defaults. Each architecture's own sections are in its package
(distrl/architectures/<name>/config.py).

A config is a tree of dataclasses; `--set a.b=v` addresses a leaf by its dotted path and the value
is parsed by the leaf's declared type (config/__init__.py)."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from distrl.config.presets import EVAL_PROTOCOLS
from distrl.errors import ConfigError

RUNTIMES = ("inline", "ray")
TRACKERS = ("", "wandb")  # tracking: none beside metrics.csv and TensorBoard, or Weights & Biases (components/tracking.py)


def ranged(default: Any, *, ge=None, gt=None, le=None, lt=None, choices=None, accepted: str = "") -> Any:
    """A leaf with the values it accepts declared beside its default; validate() checks every one and
    names them in its error (`accepted` words them where the bounds alone would not say enough)."""
    return field(default=default, metadata={"range": (ge, gt, le, lt, choices), "accepted": accepted})


def out_of_range(value: Any, meta: Mapping[str, Any]) -> bool:
    ge, gt, le, lt, choices = meta["range"]
    return ((choices is not None and value not in choices) or (ge is not None and value < ge)
            or (gt is not None and value <= gt) or (le is not None and value > le) or (lt is not None and value >= lt))


def check(ok: object, key: str, value: Any, accepted: str) -> None:
    """One config error naming the key, the value and what it accepts (a config's validate() says what
    no declared range can)."""
    if not ok:
        raise ConfigError(f"invalid value {value!r} for {key}: accepted values are {accepted}")


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def accepted_text(kind: str, meta: Mapping[str, Any]) -> str:
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
    adam_eps: float = ranged(1e-8, gt=0)  # with optimizer adam: added to sqrt(v), torch's default; Rainbow's 1.5e-4 (with batch 32) damps steps on small gradients
    fused_adam: bool = False  # with optimizer adam: torch's fused kernel, the same rule in one pass (on a CPU torch loops over the tensors)
    bf16: bool = False  # bfloat16 autocast in the networks' hidden layers (outputs, targets, loss float32) where the device has bf16 units; float32 elsewhere (not in the paper)
    channels_last: bool = False  # the Q learner's convolution weights in NHWC, oneDNN's layout: fewer reorders a step on a CPU (bench/dqn_learner_step.py)
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


@dataclass
class RayConfig:
    """How the ray runtime batches its calls (no effect inline)."""
    steps_per_call: int = ranged(100, ge=1)  # env steps an actor takes per remote call (progress is counted per call)
    # learner updates per remote call at most; a slow learner returns sooner, after its call budget (1 s)
    updates_per_call: int = ranged(50, ge=1)
    max_inflight_adds: int = ranged(8, ge=1)  # replay adds an actor may have in flight before it waits
    publish_every: int = ranged(10, ge=1)  # learner updates between parameter puts into the object store
    learner_gpus: float = -1         # -1: one GPU if the cluster has one, else 0
    # Each actor's share of a GPU (Ape-X, DQN): its batched forward pass runs there, the envs on its core.
    # 0: on the CPU. With one GPU the shares and learner_gpus must fit in it, e.g. 10 actors x 0.05 + 0.5.
    actor_gpus: float = ranged(0.0, ge=0, le=1)
    # ROLE=N pairs, comma-separated: that role's processes run at niceness N instead of Ray's worker_niceness
    # (15), e.g. evaluator=19, so that on a small machine evaluating takes only what training leaves idle
    niceness: str = ""


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
    # the newest checkpoints the run keeps (0: every one, to evaluate them after the run: distrl eval --checkpoint)
    keep_checkpoints: int = ranged(3, ge=0, accepted="whole numbers >= 0 (0: every one)")
    eval_protocol: str = "apex"      # named values of the three below (EVAL_PROTOCOLS); values set by name win
    eval_episodes: int = ranged(20, ge=0)
    eval_epsilon: float = ranged(0.001, ge=0, le=1)
    max_episode_frames: int = ranged(50_000, ge=1)  # training episode cap in env frames (Atari; other envs keep their own)
    # Atari's greyscale frames, pixels a side, in training and evaluation alike: the papers' 84, or fewer for a
    # cheaper network (42, as universe-starter-agent's A3C on CPUs); other envs ignore it
    screen_size: int = ranged(84, ge=36, accepted="whole numbers >= 36 (Nature CNN's smallest frame)")
    eval_max_frames: int = ranged(108_000, ge=4, accepted="whole numbers >= 4 (emulator frames)")  # evaluation episode cap in emulator frames (Atari only)
    eval_together: int = ranged(1, ge=1)  # evaluation episodes played at once, one batched forward pass a step (feed-forward policies; 1: one after another)
    eval_every: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: only at the end)")  # learner updates between evaluations of the latest parameters (0: at the end only)
    stop_return: float = math.inf   # end the run at the first periodic evaluation whose mean return reaches this (RLlib's stop criterion; inf: run to max_frames)
    torch_threads: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: automatic)")  # 0: one thread for small nets (vectors, MinAtar), one per core for Atari stacks
    video_every: int = ranged(0, ge=0, accepted="whole numbers >= 0 (0: no videos)")  # evaluations 0, N, 2N, ... record their first episode in RUN_DIR/videos (the video extra)
    tracking: str = ""               # "wandb": metrics, config and evaluation videos to Weights & Biases too (offline without a key)

    def validate(self) -> None:
        """What no declared range says (config.validate checks those first): choices from other tables,
        layer sizes, keys that depend on each other. An architecture's config adds its own after these."""
        check(self.runtime in RUNTIMES, "runtime", self.runtime, " or ".join(RUNTIMES))
        check(self.eval_protocol in EVAL_PROTOCOLS, "eval_protocol", self.eval_protocol, ", ".join(EVAL_PROTOCOLS))
        net = getattr(self, "net", None)
        for name in ("hidden", "actor_hidden", "critic_hidden"):
            sizes = getattr(net, name, (1,))
            check(len(sizes) >= 1 and min(sizes) >= 1, f"net.{name}", sizes,
                  "comma-separated layer sizes >= 1, e.g. 128,128")
        check(self.tracking in TRACKERS, "tracking", self.tracking, "wandb, or empty for none")
        check(not (self.video_every and not self.eval_episodes), "video_every", self.video_every,
              "0 when eval_episodes is 0 (videos are of evaluation episodes)")
        check(not math.isnan(self.stop_return), "stop_return", self.stop_return, "a number, or inf to run to max_frames")
        check(math.isinf(self.stop_return) or (self.eval_every and self.eval_episodes), "stop_return", self.stop_return,
              "inf unless eval_every and eval_episodes are both > 0 (the run stops on a periodic evaluation)")
        pairs = [p.partition("=") for p in self.nodes.split(",")] if self.nodes else []
        check(all(role and sep and is_ip(ip) for role, sep, ip in pairs), "nodes", self.nodes,
              "ROLE=IP pairs, comma-separated, e.g. learner=10.0.0.2,replay=10.0.0.2, or empty")
        niceness = getattr(getattr(self, "ray", None), "niceness", "")
        pairs = [p.partition("=") for p in niceness.split(",")] if niceness else []
        check(all(role.strip() and sep and n.strip().lstrip("-").isdigit() and -20 <= int(n) <= 19
                  for role, sep, n in pairs), "ray.niceness", niceness,
              "ROLE=N pairs, comma-separated, N from -20 to 19, e.g. evaluator=19, or empty")

    def replay_start_steps(self) -> int:
        """Agent steps before the first learner update, at the earliest: a replay-based learner waits for
        replay.min_size items; a learner without replay (A3C, BA3C) learns from its first rollout."""
        return int(getattr(getattr(self, "replay", None), "min_size", 0))
