"""Hand-written: no maintained numpy library does a growable, vectorized sum tree."""

from __future__ import annotations

import numpy as np

_JUMP_DEPTH = 12  # find() reaches this depth in one searchsorted over its 4,096 node sums


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


class SumTree:
    """Binary sum tree in one float64 array: node 1 is the root, node i has children 2i and 2i+1,
    leaves live at [capacity, 2*capacity). Batched calls loop over levels only, never over items."""

    def __init__(self, capacity: int = 1):
        self._cap = _next_pow2(max(1, capacity))
        self._tree = np.zeros(2 * self._cap)

    @property
    def capacity(self) -> int:
        return self._cap

    def grow(self, min_capacity: int) -> None:
        """Double until min_capacity leaves fit; leaf values are kept, internal sums rebuilt."""
        if min_capacity <= self._cap:
            return
        new = _next_pow2(min_capacity)
        tree = np.zeros(2 * new)
        tree[new : new + self._cap] = self._tree[self._cap :]
        size = new // 2
        while size >= 1:
            tree[size : 2 * size] = tree[2 * size : 4 * size : 2] + tree[2 * size + 1 : 4 * size : 2]
            size //= 2
        self._cap, self._tree = new, tree

    def _check_indices(self, indices) -> np.ndarray:
        idx = np.asarray(indices, dtype=np.int64).ravel()
        if idx.size and idx.min() < 0:
            raise IndexError("SumTree indices must be >= 0")
        return idx

    def update(self, indices: np.ndarray, values: np.ndarray | float) -> None:
        """Set leaves (last wins on duplicate indices), then recompute their ancestors level by level."""
        idx = self._check_indices(indices)
        if idx.size == 0:
            return
        vals = np.broadcast_to(np.asarray(values, dtype=np.float64).ravel(), idx.shape)
        if not np.all(vals >= 0):  # also catches NaN
            raise ValueError("SumTree values must be finite and >= 0")
        self.grow(int(idx.max()) + 1)
        # np.unique on the reversed array gives sorted unique indices and each one's last value.
        idx, first = np.unique(idx[::-1], return_index=True)
        vals = vals[::-1][first]
        tree, pairs = self._tree, self._tree.reshape(-1, 2)  # pairs[i] = (node 2i, node 2i+1)
        nodes = idx + self._cap
        tree[nodes] = vals
        for _ in range(self._cap.bit_length() - 1):
            # A parent listed twice is written twice with the same sum: cheaper than deduplicating.
            nodes >>= 1
            children = pairs.take(nodes, axis=0)
            tree[nodes] = children[:, 0] + children[:, 1]

    def get(self, indices: np.ndarray) -> np.ndarray:
        idx = self._check_indices(indices)
        if idx.size and idx.max() >= self._cap:
            raise IndexError(f"SumTree index {int(idx.max())} out of range for {self._cap} leaves")
        return self._tree[idx + self._cap].reshape(np.shape(indices))

    def total(self) -> float:
        return float(self._tree[1])

    def find(self, prefix: np.ndarray) -> np.ndarray:
        """Leaf whose cumulative range [c_i, c_i + v_i) holds each prefix in [0, total).

        Never returns a zero leaf: a step right is only taken into a positive subtree, so rounding
        (prefix at or just under total) lands on the last positive leaf instead of an empty one."""
        tree = self._tree
        total = tree[1]
        if not total > 0:
            raise ValueError("SumTree.find on a tree whose values are all zero")
        p = np.clip(np.asarray(prefix, dtype=np.float64).ravel(), 0.0, total)
        # A level costs ~8 numpy calls whatever its width, so the top levels are jumped in one
        # searchsorted: at 1M leaves, 20 levels become 8.
        levels = self._cap.bit_length() - 1
        depth = min(_JUMP_DEPTH, levels)
        starts = np.concatenate(([0.0], np.cumsum(tree[1 << depth : 2 << depth])))
        last = int(np.searchsorted(starts, starts[-1])) - 1  # the last positive node on that level
        j = np.minimum(np.searchsorted(starts, p, side="right") - 1, last)
        p -= starts[j]
        idx = j + (1 << depth)
        pairs = tree.reshape(-1, 2)  # pairs[i] = (left, right) child of node i
        for _ in range(levels - depth):
            left, right = pairs.take(idx, axis=0).T
            go_right = (p >= left) & (right > 0)
            p -= left * go_right
            idx <<= 1
            idx += go_right
        return (idx - self._cap).reshape(np.shape(prefix))
