"""Removers decide which items ReplayTable.trim() evicts once the table is over capacity.

Same bookkeeping calls as a Sampler (``reserve``, ``insert``, ``update``, ``remove``, ``config``;
see distrl.replay.samplers) plus ``select(k, rng) -> slots``: k distinct live slots to evict.
select() leaves the remover unchanged; the table then calls remove() on what it returned.
"""

from __future__ import annotations

import numpy as np

from distrl.errors import ConfigError
from distrl.replay.sum_tree import SumTree


class Remover:
    def reserve(self, n_slots: int) -> None: ...
    def insert(self, slots: np.ndarray, priorities: np.ndarray) -> None: ...
    def update(self, slots: np.ndarray, priorities: np.ndarray) -> None: ...
    def remove(self, slots: np.ndarray) -> None: ...

    def select(self, k: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def config(self) -> dict:
        return {}


class FifoRemover(Remover):
    """Oldest first. A queue of (slot, insertion number); entries whose slot was removed or reused
    since no longer match ``_seq`` and are skipped, so remove() is O(1) per item."""

    def __init__(self) -> None:
        self._seq = np.full(0, -1, dtype=np.int64)  # insertion number of the item in each slot
        self._next = 0
        self._q = np.zeros((2, 64), dtype=np.int64)  # rows: slot, insertion number
        self._head = self._tail = 0

    def reserve(self, n_slots):
        if n_slots > self._seq.size:
            self._seq = np.concatenate([self._seq, np.full(n_slots - self._seq.size, -1, np.int64)])

    def insert(self, slots, priorities):
        n = len(slots)
        seq = np.arange(self._next, self._next + n)
        self._next += n
        self._seq[slots] = seq
        if self._tail + n > self._q.shape[1]:
            live = self._q[:, self._head : self._tail]
            q = np.zeros((2, max(64, 2 * (live.shape[1] + n))), dtype=np.int64)
            q[:, : live.shape[1]] = live
            self._q, self._head, self._tail = q, 0, live.shape[1]
        self._q[0, self._tail : self._tail + n] = slots
        self._q[1, self._tail : self._tail + n] = seq
        self._tail += n

    def remove(self, slots):
        self._seq[slots] = -1

    def select(self, k, rng):
        chosen, got, pos = [], 0, self._head
        while got < k and pos < self._tail:
            end = min(self._tail, pos + max(2 * (k - got), 256))
            slots, seq = self._q[:, pos:end]
            valid = self._seq[slots] == seq
            if got == 0:  # stale entries before the first live one are dead for good
                self._head = pos + (int(valid.argmax()) if valid.any() else valid.size)
            chosen.append(slots[valid][: k - got])
            got += chosen[-1].size
            pos = end
        return np.concatenate(chosen) if chosen else np.zeros(0, np.int64)


class PrioritizedRemover(Remover):
    """Evicts item i with probability proportional to (p_i + eps)^alpha_evict, without replacement.

    A negative exponent evicts low-priority items more often (Ape-X DPG uses -0.4)."""

    def __init__(self, alpha_evict: float = -0.4, eps: float = 1e-6):
        if not eps > 0:
            raise ConfigError(f"PrioritizedRemover eps must be > 0, got {eps}; use e.g. 1e-6")
        if not np.isfinite(alpha_evict):
            raise ConfigError(f"PrioritizedRemover alpha_evict must be finite, got {alpha_evict}; Ape-X DPG uses -0.4")
        self.alpha_evict, self.eps = float(alpha_evict), float(eps)
        self._tree = SumTree(1)
        self._live = np.zeros(0, dtype=bool)
        self._count = 0

    def _leaf(self, priorities):
        return (np.asarray(priorities, np.float64) + self.eps) ** self.alpha_evict

    def reserve(self, n_slots):
        self._tree.grow(n_slots)
        if n_slots > self._live.size:
            self._live = np.concatenate([self._live, np.zeros(n_slots - self._live.size, bool)])

    def insert(self, slots, priorities):
        self._tree.update(slots, self._leaf(priorities))
        self._live[slots] = True
        self._count += len(slots)

    def update(self, slots, priorities):
        self._tree.update(slots, self._leaf(priorities))

    def remove(self, slots):
        self._tree.update(slots, 0.0)
        self._live[slots] = False
        self._count -= len(slots)

    def select(self, k, rng):
        if k >= self._count:
            return np.flatnonzero(self._live)
        # Draw, keep the distinct new slots, zero them so the next round cannot pick them; restore after.
        chosen: list[np.ndarray]
        chosen, saved, got = [], [], 0
        while got < k:
            total = self._tree.total()
            if not total > 0:  # only zero-weight leaves left (underflow): take the lowest live slots
                taken = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
                chosen.append(np.setdiff1d(np.flatnonzero(self._live), taken)[: k - got])
                break
            s = self._tree.find(rng.random(k - got) * total)
            _, first = np.unique(s, return_index=True)
            s = s[np.sort(first)]
            saved.append(self._tree.get(s))
            self._tree.update(s, 0.0)
            chosen.append(s)
            got += s.size
        if saved:
            self._tree.update(np.concatenate(chosen[: len(saved)]), np.concatenate(saved))
        return np.concatenate(chosen)

    def config(self):
        return {"alpha_evict": self.alpha_evict, "eps": self.eps}
