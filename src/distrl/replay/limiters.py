"""When a replay may be sampled and when it may take more: Reverb's rate limiters, as one policy over
a table's counts (inserts, samples, current size), so a local table, a sharded client summing its
shards' stats, and a driver pacing remote actors ask the same question the same way.

Reverb (rate_limiter.cc): sampling needs `size >= min_size_to_sample` and
`inserts * spi - (samples + n) >= min_diff`; inserting is free while `size + n <= min_size_to_sample`,
then needs `(inserts + n) * spi - samples <= max_diff`. `MinSize(k)` has no band (learning starts
at k items, then nothing waits); `SampleToInsertRatio(spi, k, error_buffer)` holds samples near
spi per insert, within `error_buffer` samples either way."""

from __future__ import annotations

import math
from dataclasses import dataclass

from distrl.errors import ConfigError


@dataclass(frozen=True)
class RateLimiter:
    samples_per_insert: float
    min_size_to_sample: int
    min_diff: float
    max_diff: float

    def can_sample(self, n: int, *, inserts: int, samples: int, size: int) -> bool:
        if size < self.min_size_to_sample:
            return False
        return inserts * self.samples_per_insert - (samples + n) >= self.min_diff

    def can_insert(self, n: int, *, inserts: float, samples: float, size: float) -> bool:
        if size + n <= self.min_size_to_sample:
            return True
        return (inserts + n) * self.samples_per_insert - samples <= self.max_diff


def MinSize(min_size: int) -> RateLimiter:  # noqa: N802 - Reverb's name for it
    """Sampling waits for `min_size` items; nothing else ever waits (DQN's replay start)."""
    if min_size < 1:
        raise ConfigError(f"invalid value {min_size} for replay.min_size: accepted values are whole numbers >= 1")
    return RateLimiter(1.0, int(min_size), -math.inf, math.inf)


def SampleToInsertRatio(samples_per_insert: float, min_size: int, error_buffer: float) -> RateLimiter:  # noqa: N802
    """Samples held at `samples_per_insert` per insert once `min_size` items are in, give or take
    `error_buffer` samples: the learner waits for actors past it, actors wait for the learner."""
    if not samples_per_insert > 0:
        raise ConfigError(f"invalid value {samples_per_insert} for samples_per_insert: accepted values are > 0 "
                          "(0 turns the limiter off: use MinSize)")
    if error_buffer < max(1.0, samples_per_insert):
        raise ConfigError(f"error_buffer {error_buffer} is under max(1, samples_per_insert = {samples_per_insert}): "
                          "the learner and the actors could each wait for the other forever; widen it")
    offset = samples_per_insert * min_size
    return RateLimiter(float(samples_per_insert), int(min_size), offset - error_buffer, offset + error_buffer)
