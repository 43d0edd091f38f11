"""Samplers decide which stored items a ReplayTable hands out.

Interface the table drives (slots are the table's storage rows, int64 arrays; priorities are the raw
float64 priorities): ``reserve(n_slots)`` when storage grows; ``insert(slots, p)`` for new items,
``update(slots, p)`` for live items, ``remove(slots)`` for evicted ones (slots always distinct,
table-validated); ``sample(n, rng) -> (slots, weights)`` draws with replacement from live slots,
and ``config()`` returns the constructor kwargs so a checkpoint can rebuild the sampler.
A sampler instance belongs to one table.
"""

from __future__ import annotations

import numpy as np

from distrl.errors import ConfigError
from distrl.replay.sum_tree import SumTree


class Sampler:
    def reserve(self, n_slots: int) -> None: ...
    def insert(self, slots: np.ndarray, priorities: np.ndarray) -> None: ...
    def update(self, slots: np.ndarray, priorities: np.ndarray) -> None: ...
    def remove(self, slots: np.ndarray) -> None: ...

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def mass(self) -> float:
        """Unnormalized total of the sampling distribution; shards are drawn in proportion to it."""
        raise NotImplementedError

    def probabilities(self, slots: np.ndarray) -> np.ndarray:
        """P(i) within this sampler for the given live slots."""
        raise NotImplementedError

    def weights(self, probs: np.ndarray, count: int) -> np.ndarray:
        """Importance weights for items drawn with probabilities `probs` out of `count` items."""
        return np.ones(len(probs), np.float32)

    def config(self) -> dict:
        return {}


class UniformSampler(Sampler):
    """Uniform over live items, by rejection over the slot range: slots are reused, so the table is
    dense and a draw rarely needs more than one round; weights are all 1."""

    def __init__(self) -> None:
        self._live = np.zeros(0, dtype=bool)
        self._count = 0

    def reserve(self, n_slots):
        if n_slots > self._live.size:
            self._live = np.concatenate([self._live, np.zeros(n_slots - self._live.size, bool)])

    def insert(self, slots, priorities):
        self._live[slots] = True
        self._count += len(slots)

    def remove(self, slots):
        self._live[slots] = False
        self._count -= len(slots)

    def sample(self, n, rng):
        if self._count <= 0:
            raise ValueError("cannot sample: the sampler holds no items")
        if self._count * 8 < self._live.size:  # sparse after a big trim: index the live slots
            live = np.flatnonzero(self._live)
            return live[rng.integers(0, live.size, size=n)], np.ones(n, np.float32)
        out = np.empty(n, dtype=np.int64)
        got = 0
        while got < n:
            cand = rng.integers(0, self._live.size, size=n - got)
            cand = cand[self._live[cand]]
            out[got : got + cand.size] = cand
            got += cand.size
        return out, np.ones(n, np.float32)

    def mass(self):
        return float(self._count)

    def probabilities(self, slots):
        return np.full(len(slots), 1.0 / self._count)


class PrioritizedSampler(Sampler):
    """Proportional prioritized replay (Schaul et al. 2016): P(i) = (p_i+eps)^alpha / sum_k (p_k+eps)^alpha.

    Importance weights w_i = (N * P(i))^-beta are divided by the largest weight in the sampled batch,
    as Dopamine and Acme do, so they only ever scale updates down. ``beta`` is a plain attribute so
    a schedule can anneal it."""

    def __init__(self, alpha: float = 0.6, beta: float = 0.4, eps: float = 1e-6):
        if not alpha >= 0:
            raise ConfigError(f"PrioritizedSampler alpha must be >= 0, got {alpha}; Ape-X uses 0.6")
        if not beta >= 0:
            raise ConfigError(f"PrioritizedSampler beta must be >= 0, got {beta}; Ape-X uses 0.4")
        if not eps >= 0:
            raise ConfigError(f"PrioritizedSampler eps must be >= 0, got {eps}; use e.g. 1e-6")
        self.alpha, self.beta, self.eps = float(alpha), float(beta), float(eps)
        self._tree = SumTree(1)
        self._count = 0

    def _leaf(self, priorities):
        return (np.asarray(priorities, np.float64) + self.eps) ** self.alpha

    def reserve(self, n_slots):
        self._tree.grow(n_slots)

    def insert(self, slots, priorities):
        self._tree.update(slots, self._leaf(priorities))
        self._count += len(slots)

    def update(self, slots, priorities):
        self._tree.update(slots, self._leaf(priorities))

    def remove(self, slots):
        self._tree.update(slots, 0.0)
        self._count -= len(slots)

    def sample(self, n, rng):
        total = self._tree.total()
        if not total > 0:
            raise ValueError("cannot sample: every priority is zero; give PrioritizedSampler eps > 0")
        slots = self._tree.find(rng.random(n) * total)
        return slots, self.weights(self._tree.get(slots) / total, self._count)

    def weights(self, probs, count):
        w = (count * np.asarray(probs, np.float64)) ** -self.beta
        return (w / w.max()).astype(np.float32)

    def mass(self):
        return self._tree.total()

    def probabilities(self, slots):
        return self._tree.get(slots) / self._tree.total()

    def config(self):
        return {"alpha": self.alpha, "beta": self.beta, "eps": self.eps}
