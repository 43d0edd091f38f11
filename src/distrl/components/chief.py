"""BA3C's chief as a role of a run (params/sync_chief.py holds the rule): it collects the workers'
gradients for the open round and, once enough have pushed, applies their mean to the parameter
shards. `push` returns (the round now open, whether the gradient counted).

In one process a push returns at once (the driver steps the workers in turn). Where workers run in
their own processes a push waits until its round is applied, so a worker's next gradient is
computed on that round's parameters: WaitingChief, which answers many pushes at once (an asyncio
actor; the transport's calls are awaitable there), which the chief's role names as its `apart` class
(architectures/base.py Role) for a placement that runs roles apart."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import numpy as np

from distrl.contracts import ChiefParts
from distrl.params.sync_chief import SyncChief


class Chief:
    def __init__(self, parts: ChiefParts, index: int, links: dict[str, list[Any]], transport: Any):
        self.ps = parts.shard_client(links["ps"], transport)
        self.chief = parts.make_chief(round=int(self.ps.pull()[1].max()))

    def push(self, grad: np.ndarray, round: int, worker: int) -> tuple[int, bool]:
        late = self.chief.dropped_late
        mean = self.chief.push(grad, round, worker)
        if mean is not None:
            self.ps.push(mean, [round] * len(self.ps.shards))
        return self.chief.round, self.chief.dropped_late == late

    def release(self) -> None:
        """Nothing waits in one process."""

    def stats(self) -> dict[str, Any]:
        """Rounds closed, gradients accepted and dropped late, and how long each round stayed open since
        the last call."""
        return {**self.chief.counters(), "waits": self.chief.drain_waits()}

    def pid(self) -> int:
        return os.getpid()


class WaitingChief:
    def __init__(self, parts: ChiefParts, index: int, links: dict[str, list[Any]], transport: Any):
        self.t, self.parts = transport, parts
        self.ps = parts.shard_client(links["ps"], transport)
        self.chief: SyncChief | None = None  # opened at the shards' round by the first push
        self._closed: dict[int, asyncio.Event] = {}  # round -> set once its mean is on the shards
        self._applying: int | None = None
        self._released = False
        self._opening: asyncio.Future[None] | None = None

    async def _open(self) -> None:
        versions = await asyncio.gather(*[self.t.call(shard, "counters") for shard in self.ps.shards])
        # max: a shard restored from a checkpoint lags the others by the rounds it lost
        self.chief = self.parts.make_chief(round=max(v["version"] for v in versions))

    async def push(self, grad: np.ndarray, round: int, worker: int) -> tuple[int, bool]:
        """Returns once the pushed-for round is applied (at once if the gradient was late)."""
        if self.chief is None:
            self._opening = self._opening or asyncio.ensure_future(self._open())
            await self._opening
        chief = self.chief
        assert chief is not None  # _open() made it
        if round > chief.round:  # numbered by the chief before a restart that reopened lower
            chief.dropped_late += 1
            return chief.round, False
        late = chief.dropped_late
        mean = chief.push(grad, round, worker)
        if mean is not None:
            self._applying = round
            await asyncio.gather(*self.ps.push(mean, [round] * len(self.ps.shards), wait=False))
            self._applying = None
            self._closed.pop(round, asyncio.Event()).set()
        elif round in (chief.round, self._applying) and not self._released:
            await self._closed.setdefault(round, asyncio.Event()).wait()
        return chief.round, chief.dropped_late == late

    def release(self) -> None:
        """The run is over: nothing waits for a round any more (the workers still out would otherwise
        wait for pushes from workers that get no further calls)."""
        self._released = True
        for event in self._closed.values():
            event.set()

    def stats(self) -> dict[str, Any]:
        if self.chief is None:
            return {"rounds": 0, "accepted": 0, "dropped_late": 0, "waits": []}
        return {**self.chief.counters(), "waits": self.chief.drain_waits()}

    def pid(self) -> int:
        return os.getpid()
