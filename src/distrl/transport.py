"""The seam between the parts of a run and where they live (the Transport contract, contracts.py).

A part never imports a transport: `call(target, method, *args)` starts a call, `gather(list)` waits for
several, `wait(calls, timeout)` says which have finished, `put(value)` shares a large value once.
`InProcess` calls objects in this process at once; the Ray placement passes its own (runtime/ray/)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch


def local_call(shard: Any, method: str, *args: Any) -> Any:
    return getattr(shard, method)(*args)


def local_gather(results: list) -> list:
    return results


class Finished:
    """A local call's result, held by reference so the driver can keep it among its calls in flight."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class SampleOnDemand:
    """A sample taken when it is asked for: in one process nothing overlaps it."""

    def __init__(self, sample: Callable[[], Any]):
        self.get = sample

    def close(self) -> None:
        """Nothing runs on its own."""


class LatestParams:
    """A learner's current parameters at each ask: in one process they cost no transfer."""

    def __init__(self, latest: Callable[[], tuple[dict[str, torch.Tensor], int]]):
        self.latest = latest

    def get(self) -> tuple[list, int]:
        params, version = self.latest()
        return [params], version

    def tick(self, version: int) -> None:
        """Nothing to publish ahead."""

    def publish(self) -> None:
        """Nothing to publish ahead."""


class InProcess:
    """Every call runs at once in this process, so a run is deterministic for a seed: a learner call
    makes exactly its n updates, samples are taken when needed, actors see the newest parameters."""

    dead: tuple[type[BaseException], ...] = ()  # a local part cannot die on its own: its errors are bugs
    lost: tuple[type[BaseException], ...] = ()
    call_budget_s = math.inf
    priority_batch = 1  # a learner's priorities reach the replay after each step

    @staticmethod
    def call(target: Any, method: str, *args: Any) -> Finished:
        return Finished(getattr(target, method)(*args))

    @staticmethod
    def gather(calls: list, timeout: float | None = None) -> list:
        return [c.value if isinstance(c, Finished) else c for c in calls]

    @staticmethod
    def wait(calls: list, timeout: float | None = None) -> list:
        return list(calls)

    @staticmethod
    def put(value: Any) -> Any:
        return value

    @staticmethod
    def idle(seconds: float) -> None:
        """Nothing to wait for in one process: whatever would arrive is stepped by the caller."""

    @staticmethod
    def sink(replay: Any, compress: tuple[str, ...], codec: str = "zlib", shared: tuple[str, ...] = ()) -> Any:
        """The replay itself: an add is a method call, nothing travels (a table shares its stacks' frames itself)."""
        return replay

    @staticmethod
    def prefetch(sample: Callable[[], Any], depth: int, threads: int) -> SampleOnDemand:
        return SampleOnDemand(sample)

    @staticmethod
    def publisher(latest: Callable[[], tuple[dict[str, torch.Tensor], int]]) -> LatestParams:
        return LatestParams(latest)

    @staticmethod
    def device() -> str:
        """Where a role of this placement runs its networks: the CPU, for deterministic runs (a GPU learner
        or GPU-share actor is placed on Ray)."""
        return "cpu"

    @staticmethod
    def restarted() -> bool:
        """Nothing restarts in one process."""
        return False


def retry(fn: Callable[[], Any], transport: Any, on_wait: Callable[[], None] | None = None,
          timeout_s: float = 120.0) -> Any:
    """fn() until no part it reaches through `transport` is restarting (its `dead` errors), for up to
    timeout_s; `on_wait` (default: idle 0.2 s) runs between tries."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except transport.dead:
            if time.monotonic() > deadline:
                raise
            on_wait() if on_wait is not None else transport.idle(0.2)
