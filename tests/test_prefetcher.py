import threading
import time

import pytest

from distrl.components.prefetcher import Prefetcher


def test_prefetches_in_order_up_to_depth():
    calls = []
    lock = threading.Lock()

    def sample():
        with lock:
            calls.append(len(calls))
            return calls[-1]

    p = Prefetcher(sample, depth=4)
    try:
        assert [p.get(timeout=5) for _ in range(10)] == list(range(10))
        time.sleep(0.2)
        assert p.qsize() <= 4 and len(calls) <= 10 + 4 + 1  # it stays at most `depth` ahead
    finally:
        p.close()


def test_sampler_error_reaches_the_consumer():
    def sample():
        raise RuntimeError("replay is gone")

    p = Prefetcher(sample, depth=2)
    with pytest.raises(RuntimeError, match="replay is gone"):
        p.get(timeout=5)
    p.close()


def test_several_threads_keep_several_samples_in_flight_and_lose_none():
    """Two threads: two sample() calls overlap (the first two meet at a barrier, which would time out and
    raise through get() with one thread), and every result reaches the consumer exactly once."""
    started, lock = [], threading.Lock()
    both_in = threading.Barrier(2, timeout=5)

    def sample():
        with lock:
            started.append(len(started))
            k = started[-1]
        if k < 2:
            both_in.wait()  # returns only once two calls are in flight at the same time
        else:
            time.sleep(0.001)  # a remote reply's wait: releases the GIL, as ray.get does
        return k

    p = Prefetcher(sample, depth=4, threads=2)
    try:
        got = [p.get(timeout=5) for _ in range(40)]
        assert len(set(got)) == 40 and {0, 1} <= set(got)  # none lost or repeated
    finally:
        p.close()
    with pytest.raises(ValueError, match="at least one thread"):
        Prefetcher(sample, threads=0)
