"""A background thread that samples batches ahead so the learner's compute never waits on I/O."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any


class Prefetcher:
    """Calls `sample()` on its own thread and keeps up to `depth` results ready (Ape-X: 16).

    An exception raised by `sample()` is re-raised by `get()`, so a dead replay is not hidden."""

    def __init__(self, sample: Callable[[], Any], depth: int = 16):
        self._sample = sample
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="prefetcher", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                item: Any = (True, self._sample())
            except Exception as exc:  # handed to the consumer
                item = (False, exc)
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if not item[0]:
                return

    def get(self, timeout: float | None = None) -> Any:
        ok, value = self._queue.get(timeout=timeout)
        if not ok:
            raise value
        return value

    def qsize(self) -> int:
        return self._queue.qsize()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
