"""The seam between sharded clients (replay, parameter server) and a transport.

A client never imports one: `call(shard, method, *args)` starts a call and `gather(list)` waits for
several. These defaults call local objects at once; the Ray runtime passes `.remote` and `ray.get`."""

from __future__ import annotations

from typing import Any


def local_call(shard: Any, method: str, *args: Any) -> Any:
    return getattr(shard, method)(*args)


def local_gather(results: list) -> list:
    return results
