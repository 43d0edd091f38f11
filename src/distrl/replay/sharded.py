"""A client over several replay tables (shards), local or remote.

Adds go round-robin. A sample draws how many items each shard gives from a multinomial over the
shards' sampling mass, then weights every item with its global probability
P(i) = P_shard(i) * mass_shard / total mass, so a batch follows the same distribution (and gets
the same importance weights) as one table holding everything.

The client never imports a transport: it takes a `call`/`gather` pair (distrl.transport says what
they promise); the defaults call local tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from distrl.replay.limiters import MinSize, RateLimiter
from distrl.transport import local_call, local_gather


class ShardedReplay:
    def __init__(self, shards: Sequence[Any], sampler: Any, *, seed: int | None = None,
                 call: Callable[..., Any] = local_call, gather: Callable[[list], list] = local_gather,
                 limiter: RateLimiter | None = None, priority_batch: int = 1):
        """`sampler` is a sampler of the same kind as the shards' (it only computes the weights);
        `limiter` paces the whole: it sees the shards' counts summed; `priority_batch` update_priorities
        calls are kept and sent as one call per shard (a remote call costs far more than its data)."""
        if not shards:
            raise ValueError("ShardedReplay needs at least one shard")
        self.shards, self.sampler = list(shards), sampler
        self.call, self.gather = call, gather
        self.limiter = MinSize(1) if limiter is None else limiter
        self._rng = np.random.default_rng(seed)
        self._next = 0
        self.priority_batch = priority_batch
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, batch: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> Any:
        shard = self.shards[self._next]
        self._next = (self._next + 1) % len(self.shards)
        return self.call(shard, "add", batch, priorities)

    def masses(self) -> list[tuple[float, int]]:
        return self.gather([self.call(s, "mass") for s in self.shards])

    def __len__(self) -> int:
        return int(sum(count for _, count in self.masses()))

    def sample(self, n: int, out: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """(keys [n, 2] as (shard, key), batch, importance weights). The fields named in `out` are joined
        into its arrays (n items each; components/staging.py's page-locked buffers) and returned as them."""
        out = out or {}
        if len(self.shards) == 1:
            keys, batch, weights = self.gather([self.call(self.shards[0], "sample", n)])[0]
            for name, buf in out.items():
                np.copyto(buf, batch[name])
            return np.stack([np.zeros_like(keys), keys], axis=1), {**batch, **out}, weights
        masses = self.masses()
        total = sum(m for m, _ in masses)
        count = sum(c for _, c in masses)
        if count == 0 or total <= 0:
            raise ValueError("cannot sample: every replay shard is empty")
        draws = self._rng.multinomial(n, [m / total for m, _ in masses])
        picked = [i for i, d in enumerate(draws) if d > 0]
        parts = self.gather([self.call(self.shards[i], "sample_probs", int(draws[i])) for i in picked])
        keys = np.concatenate([np.stack([np.full_like(k, i), k], axis=1) for i, (k, _, _) in zip(picked, parts)])
        probs = np.concatenate([p * masses[i][0] / total for i, (_, _, p) in zip(picked, parts)])
        batch = {name: np.concatenate([b[name] for _, b, _ in parts], out=out.get(name)) for name in parts[0][1]}
        return keys, batch, self.sampler.weights(probs, count)

    def update_priorities(self, keys: np.ndarray, priorities: np.ndarray) -> list:
        """Send (or, short of priority_batch calls, keep) new priorities; later ones win for a repeated key."""
        self._pending.append((np.asarray(keys), np.asarray(priorities)))
        return self.flush_priorities() if len(self._pending) >= self.priority_batch else []

    def flush_priorities(self) -> list:
        """Send the kept priority updates now, one call per shard they touch."""
        if not self._pending:
            return []
        keys = np.concatenate([k for k, _ in self._pending])
        priorities = np.concatenate([p for _, p in self._pending])
        self._pending = []
        return [self.call(self.shards[i], "update_priorities", keys[keys[:, 0] == i, 1], priorities[keys[:, 0] == i])
                for i in np.unique(keys[:, 0])]

    def trim(self) -> int:
        return int(sum(self.gather([self.call(s, "trim") for s in self.shards])))

    def can_sample(self, n: int = 1) -> bool:
        s = self.stats()
        return self.limiter.can_sample(n, inserts=int(s["inserts"]), samples=int(s["samples"]), size=int(s["size"]))

    def stats(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for stats in self.gather([self.call(s, "stats") for s in self.shards]):
            for k, v in stats.items():
                total[k] = total.get(k, 0) + v
        return total
