"""A role's large state (a replay shard's arrays) carried between the role and the driver in pieces of at
most CHUNK bytes, so no one message holds a whole replay set (gigabytes on Atari): each piece is one
ordinary call through the transport, whatever the placement."""

from __future__ import annotations

from typing import Any

import numpy as np

CHUNK = 64 * 2**20


def _bytes(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


class ChunkedState:
    """The role's side. `state_begin()` snapshots `state_dict()` and says each array's shape and dtype,
    `state_chunk` gives a byte range of one; `state_put` takes pieces in, `state_taken()` hands the
    arrays they made to the role's restore."""

    _outgoing: dict[str, np.ndarray] | None = None
    _incoming: dict[str, np.ndarray] | None = None

    def state_dict(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def state_begin(self) -> dict[str, tuple[tuple[int, ...], str]]:
        self._outgoing = {k: np.ascontiguousarray(v) for k, v in self.state_dict().items()}
        return {k: (v.shape, v.dtype.str) for k, v in self._outgoing.items()}

    def state_chunk(self, name: str, lo: int, hi: int) -> np.ndarray:
        assert self._outgoing is not None  # between state_begin and state_end
        return _bytes(self._outgoing[name])[lo:hi]

    def state_end(self) -> None:
        self._outgoing = None

    def state_put(self, name: str, shape: tuple[int, ...], dtype: str, lo: int, data: np.ndarray) -> None:
        incoming = self._incoming = self._incoming or {}
        if name not in incoming:
            incoming[name] = np.empty(shape, np.dtype(dtype))
        _bytes(incoming[name])[lo:lo + len(data)] = data

    def state_taken(self) -> dict[str, np.ndarray]:
        arrays, self._incoming = self._incoming or {}, None
        return arrays


def fetch(transport: Any, handle: Any) -> dict[str, np.ndarray]:
    """The driver's side: the role's state_dict(), piece by piece."""
    t = transport
    shapes = t.gather([t.call(handle, "state_begin")])[0]
    arrays = {}
    try:
        for name, (shape, dtype) in shapes.items():
            array = arrays[name] = np.empty(shape, np.dtype(dtype))
            flat = _bytes(array)
            for lo in range(0, flat.size, CHUNK):
                flat[lo:lo + CHUNK] = t.gather([t.call(handle, "state_chunk", name, lo, lo + CHUNK)])[0]
    finally:
        t.call(handle, "state_end")
    return arrays


def send(transport: Any, handle: Any, arrays: dict[str, np.ndarray]) -> None:
    """The driver's side: `arrays` into the role, piece by piece, each piece in place before the next goes."""
    t = transport
    for name, array in arrays.items():
        flat = _bytes(array)
        for lo in range(0, max(flat.size, 1), CHUNK):  # an empty array still sends one (empty) piece
            t.gather([t.call(handle, "state_put", name, array.shape, array.dtype.str, lo, flat[lo:lo + CHUNK])])
