"""The micro-benches' one timing loop: every case in turn, round after round, so that a noisy neighbour on a
shared machine hits all the cases alike; the median round is the figure."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Hashable


def alternating_rates(cases: dict[Hashable, Callable[[int], None]], n: int, rounds: int,
                      warmup: int) -> dict[Hashable, float]:
    """Calls per second of each case's `run(n)` (which makes n calls), median of `rounds` rounds, after a
    warm-up of `warmup` calls each."""
    for run in cases.values():
        run(warmup)
    rates: dict[Hashable, list[float]] = {c: [] for c in cases}
    for _ in range(rounds):
        for c, run in cases.items():
            t = time.perf_counter()
            run(n)
            rates[c].append(n / (time.perf_counter() - t))
    return {c: statistics.median(r) for c, r in rates.items()}
