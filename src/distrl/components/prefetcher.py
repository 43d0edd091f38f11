"""A background thread that samples batches ahead so the learner's compute never waits on I/O."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any


class Prefetcher:
    """Calls `sample()` on `threads` threads of its own and keeps up to `depth` results ready (Ape-X: 16).

    Each thread keeps one `sample()` in flight: with remote replay shards one request leaves the shards
    idle while its reply travels and is joined (the Pong profile in docs/notes/benchmarks.md), so more than one
    thread overlaps them; results then arrive in completion order. An exception raised by `sample()` is
    re-raised by `get()`, so a dead replay is not hidden."""

    def __init__(self, sample: Callable[[], Any], depth: int = 16, threads: int = 1):
        if threads < 1:
            raise ValueError(f"a Prefetcher needs at least one thread, got {threads}")
        self._sample = sample
        self._queue: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._slots = threading.Semaphore(depth)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._loop, name=f"prefetcher-{i}", daemon=True)
                         for i in range(threads)]
        for t in self._threads:
            t.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._slots.acquire(timeout=0.1):  # `depth` results ahead already, taken or in flight
                continue
            try:
                item: Any = (True, self._sample())
            except Exception as exc:  # handed to the consumer
                item = (False, exc)
            self._queue.put(item)  # never blocks: the slots bound it, so no thread's result waits behind another's
            if not item[0]:
                return

    def get(self, timeout: float | None = None) -> Any:
        ok, value = self._queue.get(timeout=timeout)
        self._slots.release()
        if not ok:
            raise value
        return value

    def qsize(self) -> int:
        return self._queue.qsize()

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
