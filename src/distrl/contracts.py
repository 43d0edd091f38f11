"""The contracts between the driver, the placements and the roles of a run, in one file.

A wiring (architectures/) declares its roles; a placement (runtime/) starts them and gives each a
transport; a role's class (components/workers.py) is built from the parts it needs, each of which a
Protocol below declares. The driver calls `Worker.run`; the roles reach one another only through the
transport. These live here, not in architectures/base.py, because the roles (a layer below the
wirings) are typed against them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
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
    """A called role: the driver keeps it busy with `run(n, *wiring.call_args(...))`, and calls `finish`
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

    def start(self, wiring: Any, role: Any, index: int, links: dict[str, list]) -> Any: ...

    def restarts(self, handles: list) -> int | None: ...

    def stop(self, handles: list) -> None: ...


# ---- the parts each role's class builds itself from -------------------------------------------------


class ReplayParts(Protocol):
    """A replay table of a run (ReplayShard)."""

    def replay_args(self, index: int) -> tuple: ...


class ActorParts(Protocol):
    """An actor fed by a central replay (ActorWorker: Ape-X, Ape-X DPG)."""

    def replay_client(self, shards: list, transport: Transport) -> Sink: ...

    def compressed(self) -> tuple[str, ...]: ...

    def codec(self) -> str: ...

    def shared_frames(self) -> tuple[str, ...]: ...

    def make_actor(self, index: int, sink: Sink, source: ParameterSource) -> Any: ...


class LearnerParts(Protocol):
    """The learner of a replay-fed wiring (LearnerWorker). `learner_step` is the wiring's learning step:
    train on one sampled batch, write back priorities, trim on schedule; it returns the step's metrics."""

    cfg: Any

    def make_learner(self, device: str = "cpu") -> Any: ...

    def replay_client(self, shards: list, transport: Transport) -> Any: ...

    def image_fields(self) -> tuple[str, ...]: ...

    def learner_step(self, replay: Any, learner: Any, sampled: Any) -> dict[str, float]: ...


class ShardParts(Protocol):
    """A parameter-server shard (ShardWorker) and the clients of all of them."""

    def shard_args(self, index: int) -> tuple[np.ndarray, dict[str, Any]]: ...

    def shard_client(self, shards: list, transport: Transport) -> Any: ...


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
