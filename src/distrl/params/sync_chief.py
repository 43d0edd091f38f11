"""The chief of synchronous BA3C (Adamski et al. 2018): it collects the workers' gradients for
round r and, once a fraction f of the workers have pushed for r, hands back their mean (to be
applied through the parameter server's Adam) and opens round r + 1. A gradient computed on the
parameters of an older round arrives late: it is dropped and counted, so no stale gradient is ever
applied. Cutting a round at f < 1 keeps stragglers from setting the pace.

Plain class: components/chief.py makes it a role. Where workers run apart, a push waits for its
round to close, and gradients computed on a closed round are late. Inline, the workers push in turn,
each on the newest parameters, so none is late and the rounds take the workers in a rotating window."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np


def workers_needed(workers: int, fraction: float) -> int:
    """Pushes that close a round: ceil(f * n), at least 1 (0.9 of 2 workers is both)."""
    return max(1, math.ceil(fraction * workers - 1e-9))


class SyncChief:
    def __init__(self, workers: int, fraction: float = 0.9, round: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        self.workers, self.needed, self.round = workers, workers_needed(workers, fraction), round
        self._clock = clock
        self._sum: np.ndarray | None = None
        self._pushed: set[int] = set()
        self._opened = clock()
        self.accepted = self.dropped_late = 0
        self.waits: list[float] = []  # seconds each closed round was open (since the last flush)

    def push(self, grad: np.ndarray, round: int, worker: int) -> np.ndarray | None:
        """Add `worker`'s gradient computed on round `round`'s parameters. Returns the mean to apply
        if this push closed the round (the round number has then moved on), else None. A push for
        an older round, or a second one from a worker in the same round, is dropped and counted."""
        if round != self.round or worker in self._pushed:
            if round > self.round:
                raise ValueError(f"worker {worker} pushed for round {round}, but round {self.round} is open: "
                                 "a worker must pull the parameters the chief published")
            self.dropped_late += 1
            return None
        grad = np.asarray(grad, dtype=np.float32)
        self._sum = grad.astype(np.float64) if self._sum is None else self._sum + grad
        self._pushed.add(worker)
        self.accepted += 1
        if len(self._pushed) < self.needed:
            return None
        mean = (self._sum / len(self._pushed)).astype(np.float32)
        now = self._clock()
        self.waits.append(now - self._opened)
        self.round += 1
        self._sum, self._pushed, self._opened = None, set(), now
        return mean

    def drain_waits(self) -> list[float]:
        out, self.waits = self.waits, []
        return out

    def counters(self) -> dict[str, int]:
        return {"rounds": self.round, "accepted": self.accepted, "dropped_late": self.dropped_late}
