"""Each frame of the image stacks stored once (issue 34), as DQN's replay does, for a replay whose items
are kept and evicted one by one (prioritized eviction included).

Ape-X's transitions carry two stacks of 4 frames (obs and next_obs); the consecutive transitions of one env
share 3 of them, and a transition's obs and next_obs share 4 - n. Stored as stacks, each frame is held,
compressed and inflated up to 8 times. Here a batch's distinct frames travel once (`share_frames`), and
a table keeps them in a FramePool: each frame once, with a count of the stored stacks that hold it, and
freed when the last goes. A hand-written pool because a reference-counted frame store is what no replay
library offers apart from its own table (Reverb's chunks are the nearest, and are C++ inside Reverb)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import cast

import numpy as np

FRAMES = "frames"  # the batch key of a batch's distinct frames, beside its stacks' indices into them
_BYTES_OVERHEAD = sys.getsizeof(b"")  # CPython's header of each stored blob


def share_frames(batch: Mapping, names: tuple[str, ...]) -> dict:
    """`batch` with the stacks in `names` ((B, S, *frame) arrays) replaced by int32 indices (B, S) into
    the array of their distinct frames, under FRAMES. A flush of 50 Atari transitions (stacks of 4, n = 3)
    carries about 57 frames in place of 400."""
    stacks = [np.ascontiguousarray(batch[name]) for name in names]
    frame_shape = stacks[0].shape[2:]
    for name, s in zip(names, stacks):
        if s.ndim < 3 or s.shape[2:] != frame_shape or s.shape[:2] != stacks[0].shape[:2]:
            raise ValueError(f"field {name!r} has shape {s.shape}: shared frames need stacks (batch, stack, *frame) "
                             f"of one shape, here {stacks[0].shape}")
    flat = np.concatenate([s.reshape(-1, *frame_shape) for s in stacks])
    seen: dict[bytes, int] = {}  # a frame's bytes -> its index: exact, and ~3 us per 84x84 frame
    ids = np.fromiter((seen.setdefault(f.tobytes(), len(seen)) for f in flat), np.int32, len(flat))
    first = np.zeros(len(seen), np.int64)
    first[ids[::-1]] = np.arange(len(flat) - 1, -1, -1)  # each distinct frame's first occurrence
    out = dict(batch)
    size = stacks[0].shape[0] * stacks[0].shape[1]
    for k, name in enumerate(names):
        out[name] = ids[k * size:(k + 1) * size].reshape(stacks[0].shape[:2])
    out[FRAMES] = flat[first]
    return out


class FramePool:
    """Frames held once each, raw or as per-frame compressed blobs, with how many stored stacks hold each.
    `add` files a batch's frames (held by none yet); `hold`/`release` count the stacks' indices in and out,
    and a frame no stack holds is freed. Plain arrays grown by a quarter at a time, with a free list."""

    def __init__(self, frame_shape: tuple[int, ...], dtype: np.dtype, compress: bool, inflate=None):
        """`compress`: frames arrive as blobs (Packed) and are inflated by `inflate(blob, nbytes)` on gather."""
        self.frame_shape, self.dtype, self.compress, self._inflate = tuple(frame_shape), np.dtype(dtype), compress, inflate
        self._nbytes = int(np.prod(self.frame_shape, dtype=np.int64)) * self.dtype.itemsize
        self._store: np.ndarray | list = [] if compress else np.empty((0, *self.frame_shape), self.dtype)
        self._refs = np.zeros(0, np.int64)
        self._free = np.zeros(0, np.int64)  # a stack: the next id at the end
        self._zbytes = 0

    def __len__(self) -> int:
        return len(self._refs) - len(self._free)

    def _grow(self, n: int) -> None:
        old = len(self._refs)
        new = max(old + n - len(self._free), old + max(old // 4, 64))  # 1.25x: a raw pool may hold GBs
        if self.compress:
            cast(list, self._store).extend([None] * (new - old))
        else:  # in place (realloc, mremap on Linux): no second copy of the frames; no view of it escapes
            cast(np.ndarray, self._store).resize((new, *self.frame_shape), refcheck=False)
        self._refs = np.concatenate([self._refs, np.zeros(new - old, np.int64)])
        self._free = np.concatenate([np.arange(new - 1, old - 1, -1), self._free])

    def add(self, frames) -> np.ndarray:
        """File frames (an array (U, *frame), or a list of U blobs when compressed); returns their ids."""
        n = len(frames)
        if n == 0:
            return np.zeros(0, np.int64)
        if len(self._free) < n:
            self._grow(n)
        ids = self._free[-n:][::-1].copy()
        self._free = self._free[:len(self._free) - n]
        if self.compress:
            for i, blob in zip(ids, frames):
                self._store[i] = blob
            self._zbytes += sum(map(len, frames)) + _BYTES_OVERHEAD * n
        else:
            self._store[ids] = frames
        return ids

    def hold(self, ids: np.ndarray) -> None:
        np.add.at(self._refs, np.ravel(ids), 1)

    def release(self, ids: np.ndarray) -> None:
        """Count stacks out; frames left with no holder are freed."""
        ids = np.ravel(ids)
        np.subtract.at(self._refs, ids, 1)
        if self._refs[ids].min(initial=0) < 0:
            raise RuntimeError("a shared frame was released more often than held")
        self.free_unheld(ids)

    def free_unheld(self, ids: np.ndarray) -> None:
        """Free those of `ids` (once each) that no stack holds."""
        gone = np.unique(ids)
        gone = gone[self._refs[gone] == 0]
        if self.compress:
            for i in gone:
                self._zbytes -= len(self._store[i]) + _BYTES_OVERHEAD
                self._store[i] = None
        self._free = np.concatenate([self._free, gone[::-1]])

    def gather(self, ids: np.ndarray) -> np.ndarray:
        """The frames of `ids` ((n, S) -> (n, S, *frame))."""
        if not self.compress:
            return self._store[ids]
        out = np.empty((*ids.shape, *self.frame_shape), self.dtype)
        raw = out.reshape(ids.size, -1).view(np.uint8)
        for k, i in enumerate(np.ravel(ids)):
            raw[k] = np.frombuffer(self._inflate(self._store[i], self._nbytes), np.uint8)
        return out

    def nbytes(self) -> int:
        """Bytes of frame storage: the raw array, or the blobs (with their object headers) and list pointers."""
        return self._zbytes + 8 * len(self._refs) if self.compress else cast(np.ndarray, self._store).nbytes

    # ---- checkpoints: the held frames, renumbered 0..F-1 in the order of `ids` ----------------------
    def live(self) -> np.ndarray:
        return np.flatnonzero(self._refs > 0)

    def frames_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(frames, blob lengths or None): the frames of `ids` as one array, for a checkpoint."""
        if not self.compress:
            return self._store[ids], None
        blobs = [self._store[i] for i in ids]
        return np.frombuffer(b"".join(blobs), np.uint8), np.array([len(b) for b in blobs], np.int64)

    def load(self, frames: np.ndarray, lengths: np.ndarray | None) -> np.ndarray:
        """File a checkpoint's frames; returns their ids (holders are counted by the caller)."""
        if not self.compress:
            return self.add(frames)
        assert lengths is not None  # a compressed pool's checkpoint always has its blob lengths (frames_of)
        if int(lengths.sum()) != frames.size:
            raise ValueError("shared frames' blob lengths disagree with their bytes")
        buf, ends = frames.tobytes(), np.cumsum(lengths)
        return self.add([buf[a:b] for a, b in zip(ends - lengths, ends)])
