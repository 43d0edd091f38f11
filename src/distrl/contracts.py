"""The contracts between the driver, the placements and the roles of a run, in one file.

An architecture's builder (architectures/) declares its roles in its Topology, each with its parts; a
placement (runtime/) starts them and gives each a transport; a role's class (components/workers.py) is
built from those parts, which a Protocol below declares. The driver calls `Worker.run`; the roles reach
one another only through the transport. These live here, not in architectures/base.py, because the roles
(a layer below the builders) are typed against them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

# ---- what a called role answers ------------------------------------------------------------------


@dataclass
class Report:
    """What one call of a called role did: counter deltas (so a completed call counts even if its process
    dies later), finished episodes' returns, and the latest values of its gauges."""

    counters: dict[str, float]
    returns: list[float] = field(default_factory=list)
    watched_returns: list[float] = field(default_factory=list)
    state: dict[str, float] = field(default_factory=dict)
    pid: int = field(default_factory=os.getpid)


class Worker(Protocol):
    """A called role: the driver keeps it busy with `run(n, *hooks.call_args(...))`, and calls `finish`
    once at the end (what it holds goes out; its envs close)."""

    def run(self, n: float, *args: Any) -> Report: ...

    def finish(self) -> None: ...

    def pid(self) -> int: ...


class Saveable(Protocol):
    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


# ---- how roles reach one another -----------------------------------------------------------------


class Sink(Protocol):
    """Where an actor sends its experience: a replay table, its sharded client, or a bounded remote sink."""

    def add(self, batch: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> Any: ...


class ParameterSource(Protocol):
    """Where an actor gets the newest policy: None when it has not changed since the last call."""

    def latest(self) -> tuple[dict[str, torch.Tensor], int] | None: ...


class Prefetch(Protocol):
    def get(self) -> Any: ...

    def close(self) -> None: ...


class Publisher(Protocol):
    """The parameters a learner gives its actors: `get()` -> ([parameters], version); `tick(version)` after
    each update; `publish()` now (before a checkpoint)."""

    def get(self) -> tuple[list, int]: ...

    def tick(self, version: int) -> None: ...

    def publish(self) -> None: ...


class Transport(Protocol):
    """The only way a role reaches others, and what differs for a role between running beside them
    (inline: every call made at once, in turn) and apart from them (its own process). A role asks its
    transport for these instead of asking where it runs."""

    dead: tuple[type[BaseException], ...]  # the part called is gone or restarting
    lost: tuple[type[BaseException], ...]  # ... or a sample's data is (a shard come back empty)
    call_budget_s: float  # how long one call of a learner may train before it reports
    priority_batch: int  # a learner's steps whose priority updates reach each replay shard in one call

    def call(self, target: Any, method: str, *args: Any) -> Any: ...

    def gather(self, calls: list, timeout: float | None = None) -> list: ...

    def wait(self, calls: list, timeout: float | None = None) -> list: ...

    def put(self, value: Any) -> Any: ...

    def idle(self, seconds: float) -> None: ...

    def sink(self, replay: Sink, compress: tuple[str, ...], codec: str = "zlib",
             shared: tuple[str, ...] = ()) -> Sink: ...  # how many adds may be in flight is the placement's

    def prefetch(self, sample: Callable[[], Any], depth: int, threads: int) -> Prefetch: ...

    def publisher(self, latest: Callable[[], tuple[dict[str, torch.Tensor], int]]) -> Publisher: ...  # how often: the placement's

    def device(self) -> str: ...  # where this process's role runs its networks ("cpu", "cuda")

    def restarted(self) -> bool: ...  # whether this process's role is a restart of one that died


class Placement(Protocol):
    """Where roles live ("inline", "ray"), and how much one call of a called role asks there (runtime/calls.py)."""

    name: str
    transport: Any

    def call_size(self, work: Any, cfg: Any) -> float: ...

    def check(self, roles: list, cfg: Any = None) -> None: ...

    def start(self, role: Any, index: int, links: dict[str, list]) -> Any: ...

    def restarts(self, handles: list) -> int | None: ...

    def stop(self, handles: list) -> None: ...


# ---- an architecture, and the parts each role's class builds itself from ------------------------------


class Builder(Protocol):
    """An architecture (architectures/<name>/builder.py), built from its config: the run as data for the
    driver (`topology()`: architectures/base.py's Topology), and what `distrl eval` and `export` build."""

    cfg: Any

    def topology(self) -> Any: ...

    def make_net(self) -> torch.nn.Module: ...

    def make_evaluator(self, episodes: int | None = None) -> Any: ...

    def policy_params(self, run_dir: Path, checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict]: ...



class ReplayParts(Protocol):
    """A replay table of a run (ReplayShard)."""

    def replay_args(self, index: int) -> tuple: ...


class ReplayClientParts(ReplayParts, Protocol):
    """A replay seen from the roles that feed and sample it: what its items compress and share, and the
    client that reaches its shards (architectures/replay_fed.py's ReplaySpec)."""

    compressed: tuple[str, ...]
    codec: str
    shared: tuple[str, ...]

    def client(self, shards: list, transport: Transport) -> Any: ...


class ActorParts(Protocol):
    """An actor fed by a central replay (ActorWorker: DQN, Ape-X, Ape-X DPG, R2D2)."""

    @property
    def replay(self) -> ReplayClientParts: ...

    @property
    def make_actor(self) -> Callable[[int, Sink, ParameterSource], Any]: ...


class LearnerParts(Protocol):
    """The learner of a replay-fed run (LearnerWorker): how it is built on a device, the replay it
    samples in batches (prefetched), trimmed every `trim_every` updates, and the fields it stages."""

    @property
    def replay(self) -> ReplayClientParts: ...

    @property
    def make_learner(self) -> Callable[[str], Any]: ...

    batch_size: int
    prefetch: int
    prefetch_threads: int
    trim_every: int
    image_fields: tuple[str, ...]


class ShardParts(Protocol):
    """A parameter-server shard (ShardWorker): its initial values and its ParamShard options."""

    def shard_args(self, index: int) -> tuple[np.ndarray, dict[str, Any]]: ...


class BundleParts(Protocol):
    """A Gorila bundle (BundleWorker)."""

    def shard_client(self, shards: list, transport: Transport) -> Any: ...

    def shared_replay_client(self, shards: list, transport: Transport, index: int) -> Any: ...

    def make_replay(self, index: int) -> Any: ...

    def compressed(self) -> tuple[str, ...]: ...

    def codec(self) -> str: ...

    def make_bundle(self, index: int, ps: Any, replay: Any, sink: Sink | None = None) -> Any: ...


class ActorLearnerParts(Protocol):
    """An A3C actor-learner (ActorLearnerWorker)."""

    def store_client(self, shards: list, transport: Transport) -> Any: ...

    def make_actor_learner(self, index: int, store: Any) -> Any: ...


class GradientParts(Protocol):
    """A BA3C worker (GradientWorker); `delays[i]` seconds are added to each of worker i's gradients."""

    delays: list[float]

    def shard_client(self, shards: list, transport: Transport) -> Any: ...

    def make_gradient_worker(self, index: int) -> Any: ...


class ChiefParts(Protocol):
    """BA3C's chief (Chief, WaitingChief)."""

    def shard_client(self, shards: list, transport: Transport) -> Any: ...

    def make_chief(self, round: int = 0) -> Any: ...


class EvaluatorParts(Protocol):
    def make_evaluator(self, episodes: int | None = None) -> Any: ...
