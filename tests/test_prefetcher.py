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
