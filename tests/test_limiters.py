"""Reverb's rate limiters, with numbers worked by hand, and the tables and clients that use them."""

import numpy as np
import pytest

from distrl.errors import ConfigError
from distrl.replay import MinSize, ReplayTable, SampleToInsertRatio
from distrl.replay.sharded import ShardedReplay


def test_min_size_gates_sampling_only():
    lim = MinSize(3)
    assert not lim.can_sample(1, inserts=2, samples=0, size=2)
    assert lim.can_sample(1, inserts=3, samples=0, size=3)
    assert lim.can_sample(32, inserts=3, samples=10**9, size=3)  # no ratio: the learner never waits once started
    assert lim.can_insert(10**6, inserts=10**9, samples=0, size=10**9)  # nor do actors
    with pytest.raises(ConfigError, match="replay.min_size"):
        MinSize(0)


def test_sample_to_insert_ratio_band():
    # spi 2, start at 10 items, buffer 8: min_diff = 2*10 - 8 = 12, max_diff = 20 + 8 = 28.
    lim = SampleToInsertRatio(2.0, 10, error_buffer=8)
    assert (lim.min_diff, lim.max_diff) == (12.0, 28.0)
    assert not lim.can_sample(1, inserts=9, samples=0, size=9)  # under min_size
    # After 10 inserts: 10*2 - (s + 1) >= 12 holds for s <= 7, so 8 samples go, the 9th waits.
    assert lim.can_sample(1, inserts=10, samples=7, size=10)
    assert not lim.can_sample(1, inserts=10, samples=8, size=10)
    assert lim.can_sample(8, inserts=10, samples=0, size=10) and not lim.can_sample(9, inserts=10, samples=0, size=10)
    # Without samples, inserts go freely to min_size, then while (i + 1)*2 <= 28: up to 14 items.
    assert lim.can_insert(10, inserts=0, samples=0, size=0)
    assert lim.can_insert(1, inserts=13, samples=0, size=13) and not lim.can_insert(1, inserts=14, samples=0, size=14)
    assert lim.can_insert(1, inserts=14, samples=4, size=14)  # 30 - 4 = 26 <= 28: samples make room


def test_sample_to_insert_ratio_refuses_a_band_that_can_deadlock():
    with pytest.raises(ConfigError, match="error_buffer"):
        SampleToInsertRatio(4.0, 100, error_buffer=3)
    with pytest.raises(ConfigError, match="samples_per_insert"):
        SampleToInsertRatio(0.0, 100, error_buffer=10)


def test_actor_and_learner_paced_by_the_limiter_keep_the_ratio():
    """An actor inserting 5 at a time and a learner sampling 32 at a time, each as fast as the limiter
    lets it, in a random order: samples / inserts stays within the band around spi."""
    rng = np.random.default_rng(0)
    spi, start, buffer = 8.0, 200, 8.0 * 50
    lim = SampleToInsertRatio(spi, start, error_buffer=buffer)
    inserts = samples = 0
    for _ in range(20_000):
        if rng.random() < 0.5:
            if lim.can_insert(5, inserts=inserts, samples=samples, size=inserts):
                inserts += 5
        elif lim.can_sample(32, inserts=inserts, samples=samples, size=inserts):
            samples += 32
        if inserts > start:
            assert spi * start - buffer - 32 <= inserts * spi - samples <= spi * start + buffer + 5 * spi
    assert inserts > 5_000 and samples / (inserts - start) == pytest.approx(spi, rel=0.1)


def test_tables_and_sharded_clients_ask_their_limiter():
    batch = {"x": np.arange(6, dtype=np.float32)}
    table = ReplayTable(100, seed=0, limiter=MinSize(10))
    table.add(batch)
    assert not table.can_sample(4)
    table.add(batch)
    assert table.can_sample(4)
    assert ReplayTable(100, seed=0).can_sample(1) is False  # the default MinSize(1): empty tables wait
    shards = [ReplayTable(100, seed=i) for i in range(2)]
    client = ShardedReplay(shards, shards[0].sampler, seed=0, limiter=SampleToInsertRatio(1.0, 8, error_buffer=4))
    client.add(batch)
    assert not client.can_sample(1)  # 6 items in all, under 8
    client.add(batch)  # 12 inserts over both shards: 12 - (s + n) >= 8 - 4 for s + n <= 8
    assert client.can_sample(8) and not client.can_sample(9)
    client.sample(8)
    assert not client.can_sample(1)
