"""What a role gets from the Ray transport in place of the direct calls it makes in one process: a
bounded, deflating sink to a remote replay, and parameters published ahead into the object store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import ray
import torch

from distrl.replay import pack


class BoundedSink:
    """Actor-side replay client for remote shards: adds go out without waiting, but at most `limit` at a
    time, so a slow replay slows the actors instead of filling the object store. Fields in `compress`
    are compressed here with `codec`, in the actor, so the central replay only files bytes (bench/peers: replay_ops);
    the stacks in `shared` travel as their distinct frames, once each (replay/frames.py)."""

    def __init__(self, replay: Any, transport: Any, limit: int, compress: tuple[str, ...] = (), codec: str = "zlib",
                 shared: tuple[str, ...] = ()):
        self.replay, self.transport, self.limit, self.compress, self.codec = replay, transport, limit, compress, codec
        self.shared = shared
        self._inflight: list[Any] = []

    def add(self, batch: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> None:
        self._inflight.append(self.replay.add(pack(batch, self.compress, self.codec, self.shared), priorities))
        while len(self._inflight) > self.limit:
            for call in self.transport.wait(self._inflight, timeout=None):
                self._inflight.remove(call)
                try:
                    self.transport.gather([call])
                except self.transport.dead:
                    pass  # a dead shard: only this batch is lost; any other error is a bug and is raised


class Published:
    """A learner's parameters put into the object store once every `every` updates, so that the actors'
    asks cost the learner nothing: an ask gets parameters at most `every` updates old."""

    def __init__(self, latest: Callable[[], tuple[dict[str, torch.Tensor], int]], every: int):
        self.latest, self.every = latest, every
        self.publish()

    def publish(self) -> None:
        params, version = self.latest()
        self._params = ([ray.put({k: v.numpy() for k, v in params.items()})], version)

    def tick(self, version: int) -> None:
        if version % self.every == 0:
            self.publish()

    def get(self) -> tuple[list[Any], int]:
        """([parameters], version): a list keeps Ray from resolving the shared reference on the way."""
        return self._params
