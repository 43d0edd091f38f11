"""The micro-benches' one timing loop: every case in turn, round after round, so that a noisy neighbour on a
shared machine hits all the cases alike; the median round is the figure."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Hashable


def alternating_rates(cases: dict[Hashable, Callable[[int], None]], rounds: int, warmup: int, n: int = 0,
                      seconds: float = 0.0) -> dict[Hashable, float]:
    """Calls per second of each case's `run(k)` (which makes k calls), median of `rounds` rounds, after a
    warm-up of `warmup` calls each. A round makes `n` calls of every case, or with `seconds` as many as the
    rate of a second warm-up fits in that time (so cases whose rates differ 100-fold all get rounds that long)."""
    counts = {}
    for c, run in cases.items():
        run(warmup)
        if seconds:  # the rate of a second, warm batch of calls (a first call can carry one-off set-up)
            t = time.perf_counter()
            run(warmup)
        counts[c] = max(1, round(seconds * warmup / (time.perf_counter() - t))) if seconds else n
    rates: dict[Hashable, list[float]] = {c: [] for c in cases}
    for _ in range(rounds):
        for c, run in cases.items():
            t = time.perf_counter()
            run(counts[c])
            rates[c].append(counts[c] / (time.perf_counter() - t))
    return {c: statistics.median(r) for c, r in rates.items()}
