"""ReplayTable: keyed storage plus a Sampler (who is drawn) and a Remover (who is evicted), Reverb-style.

Plain Python, single-threaded by contract: whoever wraps it (a Ray actor, the inline runtime)
serializes calls. Experience comes and goes in batches: dicts of numpy arrays sharing a leading dim.
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Mapping
from typing import NamedTuple, cast

import lz4.block
import numpy as np

from distrl.errors import CheckpointError, ConfigError
from distrl.replay.frames import FRAMES, FramePool, share_frames
from distrl.replay.limiters import MinSize, RateLimiter
from distrl.replay.removers import FifoRemover, PrioritizedRemover
from distrl.replay.samplers import PrioritizedSampler, UniformSampler

# 28 slot bits (268M rows) leave 35 bits of insertion number: 3.4e10 inserts, 6x the transitions of
# Ape-X's 5-day Atari run, into one table.
_SLOT_BITS = 28
SLOT_MASK = (1 << _SLOT_BITS) - 1
_MAX_INSERTS = 1 << (63 - _SLOT_BITS)
_FORMAT = "distrl.replay.v1"
_FORMAT_SHARED = "distrl.replay.v2"  # v1 and a pool of shared frames (replay/frames.py)
# Raw deflate (no zlib header/adler32: the checkpoint zip has its own CRC) at level 1. Measured on
# Pong 4x84x84 stacks: ~525 B per stack, ~29 us to compress, ~20 us to inflate; zlib-wrapped is
# 40/28 us, level 6 is 3x slower to compress for ~0.65x the size.
_ZLEVEL, _ZWBITS = 1, -15
_BYTES_OVERHEAD = sys.getsizeof(b"")  # CPython header of each stored bytes object
_SAMPLERS = {c.__name__: c for c in (UniformSampler, PrioritizedSampler)}
_REMOVERS = {c.__name__: c for c in (FifoRemover, PrioritizedRemover)}


class BatchError(ConfigError, ValueError):
    """A batch or priorities the table cannot take (caught as ConfigError or ValueError)."""


class Packed(NamedTuple):
    """One field's items compressed by the sender, exactly as a table that compresses the field stores
    them. Reverb's writers compress on the client too: the one central replay then only files bytes,
    the actors share the compression work, and the wire carries ~1/50 of the raw Atari stacks."""
    blobs: list
    shape: tuple
    dtype: np.dtype
    codec: str = "zlib"

    @classmethod
    def of(cls, items, codec: str = "zlib") -> "Packed":
        """`items` (one per row) compressed with `codec`."""
        items = np.asarray(items)
        return cls(deflate(items, codec), items.shape[1:], items.dtype, codec)


def _zlib_compress(item) -> bytes:
    z = zlib.compressobj(_ZLEVEL, zlib.DEFLATED, _ZWBITS)
    return z.compress(item) + z.flush()


def _lz4_compress(item) -> bytes:
    return lz4.block.compress(item, store_size=False)


def _lz4_decompress(blob: bytes, nbytes: int) -> bytes:
    return lz4.block.decompress(blob, uncompressed_size=nbytes)


# name: (compress an item's buffer, inflate a blob to its `nbytes`). Both drop the GIL. On Pong stacks
# (bench/learner_path.py) LZ4 keeps about zlib-1's size (~510 B) and inflates a batch of 512 ~2.4x faster,
# which is the replay shards' cost when a GPU learner samples them.
CODECS = {"zlib": (_zlib_compress, lambda blob, nbytes: zlib.decompress(blob, _ZWBITS, nbytes)),
          "lz4": (_lz4_compress, _lz4_decompress)}


def frame_fields(compress: bool, obs_shape: tuple) -> tuple[str, ...]:
    """The fields a replay compresses: image observations (3-d), when the config asks for it."""
    return ("obs", "next_obs") if compress and len(obs_shape) == 3 else ()


def deflate(items: np.ndarray, codec: str = "zlib") -> list[bytes]:
    """Each item (row of `items`) as compressed bytes, the table's storage format."""
    compress = CODECS[codec][0]
    return [compress(item) for item in np.ascontiguousarray(items)]


def pack(batch: Mapping, names: tuple[str, ...], codec: str = "zlib", shared: tuple[str, ...] = ()) -> dict:
    """The batch with the fields in `names` compressed into Packed values, for a table compressing them;
    the stacks in `shared` sent as their distinct frames once (replay/frames.py), compressed with the
    others when they are in `names`."""
    out = share_frames(batch, shared) if shared else dict(batch)
    if shared and set(shared) <= set(names):
        out[FRAMES] = Packed.of(out[FRAMES], codec)
    for name in names:
        if name in shared:
            continue
        out[name] = Packed.of(batch[name], codec)
    return out


def _item_spec(a) -> tuple[tuple[int, ...], np.dtype]:
    return (tuple(a.shape), np.dtype(a.dtype)) if isinstance(a, Packed) else (a.shape[1:], a.dtype)


class ReplayTable:
    """Soft-capacity replay: add() always succeeds, trim() evicts the excess chosen by the remover.

    Keys are unique int64s: the insertion number in the high bits, the storage slot in the low 28,
    so a key lookup is one vectorized compare (a key whose slot now holds a newer item is stale).
    Storage grows by doubling up to capacity and is reused through a free list; fields named in
    ``compress`` are stored per item as `codec` bytes (zlib or lz4) and inflated on sample; they may
    arrive already compressed by the sender (`pack`). Stacks named in ``shared`` are stored as indices
    into one pool of frames, each held once (replay/frames.py), compressed per frame when they are also
    in ``compress``; they arrive as `pack` sends them, or as stacks.
    """

    def __init__(self, capacity: int, sampler=None, remover=None, seed: int | None = None,
                 compress: tuple[str, ...] = (), limiter: RateLimiter | None = None, codec: str = "zlib",
                 shared: tuple[str, ...] = ()):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ConfigError(f"replay capacity must be a positive integer, got {capacity!r}; set e.g. capacity=1_000_000")
        if capacity > SLOT_MASK:
            raise ConfigError(f"replay capacity {capacity} exceeds one table's limit of {SLOT_MASK}; shard the replay")
        if isinstance(compress, str) or not all(isinstance(c, str) for c in compress):
            raise ConfigError(f"compress must be a tuple of field names, got {compress!r}; use e.g. compress=('obs', 'next_obs')")
        if codec not in CODECS:
            raise ConfigError(f"unknown replay codec {codec!r}; use one of {sorted(CODECS)}")
        if isinstance(shared, str) or (set(shared) & set(compress) and not set(shared) <= set(compress)):
            raise ConfigError(f"shared={shared!r} with compress={compress!r}: the shared stacks' frames are one pool, "
                              "so compress all of them or none")
        self.shared = tuple(shared)
        self._frames_compressed = bool(set(shared) & set(compress))
        self._pool: FramePool | None = None
        self.codec = codec
        self._inflate = CODECS[codec][1]
        self.capacity = int(capacity)
        self.sampler = UniformSampler() if sampler is None else sampler
        self.remover = FifoRemover() if remover is None else remover
        self.compress = tuple(c for c in compress if c not in self.shared)  # per-item blobs
        self.limiter = MinSize(1) if limiter is None else limiter
        self._rng = np.random.default_rng(seed)
        self._spec: dict[str, tuple[tuple[int, ...], np.dtype]] | None = None
        self._fields: dict[str, np.ndarray | list] = {}  # compressed fields: list of bytes | None
        self._n_slots = 0
        self._slot_key = np.zeros(0, dtype=np.int64)  # -1: free
        self._priority = np.zeros(0, dtype=np.float64)
        self._free = np.zeros(0, dtype=np.int64)  # stack, next slot at the end
        self._size = 0
        self._zbytes = 0
        self._max_priority = 1.0
        self._inserts = self._samples = self._removed = self._priority_updates = 0

    # ---- storage -------------------------------------------------------------------------
    def _resize(self, new: int) -> None:
        old = self._n_slots
        if new > SLOT_MASK + 1:
            raise ConfigError(f"replay table needs {new} slots, over its limit of {SLOT_MASK + 1}; call trim() more often")
        spec = cast("dict[str, tuple[tuple[int, ...], np.dtype]]", self._spec)  # set before any slot exists
        for name, (shape, dtype) in spec.items():
            if name in self.compress:
                cast(list, self._fields[name]).extend([None] * (new - old))
            else:
                arr = np.empty((new, *shape), dtype=dtype)
                arr[:old] = self._fields[name][:old]
                self._fields[name] = arr
        self._slot_key = np.concatenate([self._slot_key, np.full(new - old, -1, np.int64)])
        self._priority = np.concatenate([self._priority, np.zeros(new - old)])
        self._free = np.concatenate([np.arange(new - 1, old - 1, -1, dtype=np.int64), self._free])
        self._n_slots = new
        self.sampler.reserve(new)
        self.remover.reserve(new)

    def _alloc(self, n: int) -> np.ndarray:
        if self._free.size < n:
            need = self._n_slots + n - self._free.size
            if need <= self.capacity:  # doubling, but never past capacity unless forced
                new = max(need, min(max(2 * self._n_slots, 16), self.capacity))
            else:  # soft overflow until the next trim(): grow gently, big rows are costly
                new = max(need, self._n_slots + max(self._n_slots // 8, 16))
            self._resize(new)
        slots = self._free[-n:][::-1].copy()
        self._free = self._free[:-n]
        return slots

    def _check_batch(self, batch) -> tuple[dict[str, np.ndarray | Packed], int]:
        if not isinstance(batch, Mapping) or not batch:
            raise BatchError("add() takes a non-empty dict of numpy arrays sharing a leading batch dimension")
        arrays = {k: (v if isinstance(v, Packed) else np.asarray(v)) for k, v in batch.items()}
        for k, a in arrays.items():
            if isinstance(a, Packed) and k not in self.compress:
                raise BatchError(f"field {k!r} arrives compressed (Packed) but this table stores it raw; "
                                 f"build the table with compress={tuple(self.compress) + (k,)!r} or send arrays")
            if isinstance(a, Packed) and a.codec != self.codec:
                raise BatchError(f"field {k!r} arrives compressed with {a.codec}, this table stores {self.codec}; "
                                 f"pack it with codec={self.codec!r}")
        lens = {k: (len(a.blobs) if isinstance(a, Packed) else a.shape[0] if a.ndim else None)
                for k, a in arrays.items()}
        n = next(iter(lens.values()))
        for k, m in lens.items():
            if m is None or m != n:
                raise BatchError(f"field {k!r} has leading dim {m}, expected {n}: every field needs the same batch dimension")
        assert n is not None  # it is the first field's length, checked just above
        if self._spec is None:
            for k, a in arrays.items():
                if np.dtype(a.dtype).kind not in "biuf":
                    raise BatchError(f"field {k!r} has dtype {a.dtype}; store numeric or bool arrays")
            missing = [c for c in self.compress if c not in arrays]
            if missing:
                raise BatchError(f"compress names field {missing[0]!r} that the batch lacks; fix compress= or the batch")
            self._spec = {k: _item_spec(a) for k, a in arrays.items()}
            self._fields = {k: ([] if k in self.compress else np.empty((0, *shape), dtype))
                            for k, (shape, dtype) in self._spec.items()}
            return arrays, n
        if arrays.keys() != self._spec.keys():
            extra = sorted(arrays.keys() - self._spec.keys())
            missing = sorted(self._spec.keys() - arrays.keys())
            name = (extra or missing)[0]
            raise BatchError(f"field {name!r} is {'unexpected' if extra else 'missing'}: this table stores {sorted(self._spec)}")
        for k, a in arrays.items():
            shape, dtype = self._spec[k]
            if _item_spec(a)[0] != shape:
                raise BatchError(f"field {k!r} has item shape {_item_spec(a)[0]}, the table stores {shape}")
            if isinstance(a, Packed):
                if np.dtype(a.dtype) != dtype:
                    raise BatchError(f"field {k!r} was deflated from {np.dtype(a.dtype)}, the table stores {dtype}; "
                                     "cast it before pack()")
            elif a.dtype != dtype:
                if not np.can_cast(a.dtype, dtype, "same_kind"):
                    raise BatchError(f"field {k!r} has dtype {a.dtype}, the table stores {dtype}; cast it first")
                arrays[k] = a.astype(dtype)
        return arrays, n

    @staticmethod
    def _check_priorities(priorities, n: int) -> np.ndarray:
        p = np.asarray(priorities, dtype=np.float64)
        if p.shape != (n,):
            raise BatchError(f"priorities have shape {p.shape}, expected ({n},): one per item")
        if not np.all(p >= 0) or not np.all(np.isfinite(p)):
            raise BatchError("priorities must be finite and >= 0; check the TD errors for NaN/inf")
        return p

    # ---- public API ----------------------------------------------------------------------
    def add(self, batch: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> np.ndarray:
        """Store a batch; without priorities each item gets the max priority seen so far."""
        frames = None
        if self.shared:
            batch, frames = self._split_frames(batch)
        elif isinstance(batch, Mapping) and FRAMES in batch:
            raise BatchError("the batch carries shared frames (pack(shared=...)) but this table stores whole stacks; "
                             "build it with shared=(the stacked fields), as replay.share_frames does")
        arrays, n = self._check_batch(batch)
        prio = np.full(n, self._max_priority) if priorities is None else self._check_priorities(priorities, n)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if self._inserts + n >= _MAX_INSERTS:
            raise ConfigError(f"replay table has taken {self._inserts} inserts, the most its keys can number; start a new table")
        slots = self._alloc(n)
        keys = ((self._inserts + np.arange(n, dtype=np.int64)) << _SLOT_BITS) | slots
        if frames is not None:
            assert self._pool is not None  # made by _split_frames
            ids = self._pool.add(frames)
            for name in self.shared:
                arrays[name] = ids[cast(np.ndarray, arrays[name])]  # _split_frames made them int64 indices
            self._pool.hold(np.concatenate([cast(np.ndarray, arrays[name]).ravel() for name in self.shared]))
            self._pool.free_unheld(ids)  # a frame no stack of the batch names
        for name, a in arrays.items():
            if name in self.compress:
                store = self._fields[name]
                blobs = a.blobs if isinstance(a, Packed) else deflate(a, self.codec)
                for s, blob in zip(slots, blobs):
                    store[s] = blob
                self._zbytes += sum(map(len, blobs)) + _BYTES_OVERHEAD * n
            else:
                self._fields[name][slots] = a
        self._slot_key[slots] = keys
        self._priority[slots] = prio
        self._size += n
        self._inserts += n
        self._max_priority = max(self._max_priority, float(prio.max()))
        self.sampler.insert(slots, prio)
        self.remover.insert(slots, prio)
        return keys

    def _split_frames(self, batch) -> tuple[dict, list | np.ndarray]:
        """(the batch's other fields with the shared stacks as int64 frame indices, its frames as the pool
        files them); a batch of plain stacks is shared here (inline, nothing was packed)."""
        if not isinstance(batch, Mapping) or not batch:
            raise BatchError("add() takes a non-empty dict of numpy arrays sharing a leading batch dimension")
        missing = [name for name in self.shared if name not in batch]
        if missing:
            raise BatchError(f"shared names field {missing[0]!r} that the batch lacks; fix shared= or the batch")
        if FRAMES not in batch:
            try:
                batch = share_frames(batch, self.shared)
            except ValueError as e:
                raise BatchError(str(e)) from None
        frames = batch[FRAMES]
        if isinstance(frames, Packed) and not self._frames_compressed:
            raise BatchError("the batch's frames arrive compressed (Packed), this table stores them raw; build the "
                             f"table with compress={self.compress + self.shared!r} or send arrays")
        if isinstance(frames, Packed) and frames.codec != self.codec:
            raise BatchError(f"the batch's frames arrive compressed with {frames.codec}, this table stores "
                             f"{self.codec}; pack them with codec={self.codec!r}")
        if self._frames_compressed and not isinstance(frames, Packed):
            frames = Packed.of(frames, self.codec)
        packed = isinstance(frames, Packed)
        shape, dtype = (tuple(frames.shape), np.dtype(frames.dtype)) if packed else (frames.shape[1:], frames.dtype)
        count = len(frames.blobs) if packed else len(frames)
        if self._pool is None:
            self._pool = FramePool(shape, dtype, self._frames_compressed, self._inflate)
        elif (shape, dtype) != (self._pool.frame_shape, self._pool.dtype):
            raise BatchError(f"the batch's frames are {shape} {dtype}, this table's are "
                             f"{self._pool.frame_shape} {self._pool.dtype}")
        rest = {k: v for k, v in batch.items() if k != FRAMES}
        for name in self.shared:
            idx = np.asarray(rest[name])
            if idx.dtype.kind not in "iu" or idx.ndim != 2 or (idx.size and not 0 <= idx.min() <= idx.max() < count):
                raise BatchError(f"field {name!r} must hold (batch, stack) indices into the batch's {count} frames")
            rest[name] = idx.astype(np.int64)
        return rest, (frames.blobs if packed else frames)

    def _gather(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        assert self._spec is not None  # only sampled when not empty
        out = {}
        for name, (shape, dtype) in self._spec.items():
            if name in self.shared:
                assert self._pool is not None  # shared frames were added
                out[name] = self._pool.gather(self._fields[name][slots])
                continue
            if name not in self.compress:
                out[name] = self._fields[name][slots]
                continue
            store, nbytes, inflate = self._fields[name], int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, self._inflate
            arr = np.empty((len(slots), *shape), dtype=dtype)
            raw = arr.reshape(len(slots), -1).view(np.uint8)
            for i, s in enumerate(slots):
                raw[i] = np.frombuffer(inflate(store[s], nbytes), np.uint8)
            out[name] = arr
        return out

    def sample(self, n: int) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Draw n items with replacement: (keys int64[n], batch, weights float32[n]).

        Prioritized: P(i) = p_i^alpha / sum_k p_k^alpha and w_i = (N * P(i))^-beta divided by the
        max weight in this batch (as Dopamine/Acme do). Uniform: weights are all 1."""
        if self._size == 0:
            raise ValueError("cannot sample from an empty ReplayTable: add() experience first")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise BatchError(f"sample() needs a positive integer batch size, got {n!r}")
        slots, weights = self.sampler.sample(int(n), self._rng)
        self._samples += int(n)
        return self._slot_key[slots], self._gather(slots), np.asarray(weights, dtype=np.float32)

    def sample_probs(self, n: int) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Like sample() but returns each item's probability P(i) instead of its weight, so a
        sharded client can weight across shards (replay/sharded.py)."""
        keys, batch, _ = self.sample(n)
        return keys, batch, self.sampler.probabilities(keys & SLOT_MASK)

    def can_sample(self, n: int = 1) -> bool:
        """Whether the limiter lets `n` items be sampled now (replay start, sample-to-insert ratio)."""
        return self.limiter.can_sample(n, inserts=self._inserts, samples=self._samples, size=self._size)

    def can_insert(self, n: int = 1) -> bool:
        return self.limiter.can_insert(n, inserts=self._inserts, samples=self._samples, size=self._size)

    def mass(self) -> tuple[float, int]:
        """(total sampling mass, item count): what a sharded client needs to pick shards."""
        return (self.sampler.mass() if self._size else 0.0), self._size

    def update_priorities(self, keys: np.ndarray, priorities: np.ndarray) -> None:
        """Set new priorities; keys no longer in the table (evicted, slot reused) are ignored."""
        keys = np.asarray(keys, dtype=np.int64).ravel()
        prio = self._check_priorities(priorities, keys.size)
        slots = keys & SLOT_MASK
        ok = (keys >= 0) & (slots < self._n_slots)
        ok[ok] = self._slot_key[slots[ok]] == keys[ok]
        slots, prio = slots[ok], prio[ok]
        if slots.size == 0:
            return
        slots, last = np.unique(slots[::-1], return_index=True)  # duplicates: last one wins
        prio = prio[::-1][last]
        self._priority[slots] = prio
        self.sampler.update(slots, prio)
        self.remover.update(slots, prio)
        self._priority_updates += slots.size
        self._max_priority = max(self._max_priority, float(prio.max()))

    def trim(self) -> int:
        """Evict len - capacity items chosen by the remover; returns how many went."""
        excess = self._size - self.capacity
        if excess <= 0:
            return 0
        slots = np.asarray(self.remover.select(excess, self._rng), dtype=np.int64)
        if slots.size != excess or np.unique(slots).size != excess or np.any(self._slot_key[slots] < 0):
            raise RuntimeError(f"{type(self.remover).__name__}.select({excess}) must return {excess} distinct live slots")
        for name in self.compress:
            store = self._fields[name]
            for s in slots:
                self._zbytes -= len(store[s]) + _BYTES_OVERHEAD
                store[s] = None
        if self.shared:
            assert self._pool is not None  # items are stored, so their frames are
            self._pool.release(np.concatenate([self._fields[name][slots].ravel() for name in self.shared]))
        self._slot_key[slots] = -1
        self.sampler.remove(slots)
        self.remover.remove(slots)
        self._free = np.concatenate([self._free, slots[::-1]])
        self._size -= excess
        self._removed += excess
        return excess

    def __len__(self) -> int:
        return self._size

    def stats(self) -> dict:
        return {"size": self._size, "capacity": self.capacity, "inserts": self._inserts,
                "samples": self._samples, "removed": self._removed, "priority_updates": self._priority_updates}

    def nbytes(self) -> int:
        """Bytes held by item storage: allocated rows of plain fields + compressed blobs (with
        their Python object headers). Excludes the per-slot index (~50 B/slot: keys, priorities, trees)."""
        plain = sum(cast(np.ndarray, a).nbytes for n, a in self._fields.items() if n not in self.compress)
        pool = self._pool.nbytes() if self._pool is not None else 0
        return plain + pool + self._zbytes + 8 * self._n_slots * len(self.compress)  # + list pointers

    # ---- state -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """The whole table as named arrays ("meta" a JSON document in bytes): data the driver stores with a
        checkpoint (checkpoint.py writes it), in pieces where the table is large (components/chunks.py)."""
        for part, known in ((self.sampler, _SAMPLERS), (self.remover, _REMOVERS)):
            if type(part) not in known.values():
                raise ConfigError(f"cannot checkpoint a table using {type(part).__name__}; state_dict() knows only "
                                  f"{sorted(known)}")
        live = np.flatnonzero(self._slot_key >= 0)
        live = live[np.argsort(self._slot_key[live])]  # insertion order: rebuilds FIFO order on restore
        spec = self._spec or {}
        names = list(spec)
        meta = {
            "format": _FORMAT_SHARED if self.shared else _FORMAT, "capacity": self.capacity,
            "compress": list(self.compress) + (list(self.shared) if self._frames_compressed else []), "codec": self.codec,
            "shared": list(self.shared),
            "frame": ([list(self._pool.frame_shape), self._pool.dtype.str] if self._pool is not None else None),
            "n_slots": self._n_slots,
            "fields": [[k, list(spec[k][0]), spec[k][1].str] for k in names],
            "counters": [self._inserts, self._samples, self._removed, self._priority_updates],
            "max_priority": self._max_priority, "rng": self._rng.bit_generator.state,
            "sampler": [type(self.sampler).__name__, self.sampler.config()],
            "remover": [type(self.remover).__name__, self.remover.config()],
        }
        arrays: dict[str, np.ndarray] = {
                  "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), "keys": self._slot_key[live],
                  "priorities": self._priority[live], "free": self._free.copy()}
        if self._pool is not None:  # the held frames, renumbered in id order; the stacks' indices with them
            held = self._pool.live()
            arrays["frames"], lengths = self._pool.frames_of(held)
            if lengths is not None:
                arrays["frames_len"] = lengths
        for i, name in enumerate(names):
            if name in self.shared:
                arrays[f"field{i}"] = np.searchsorted(held, self._fields[name][live])
            elif name in self.compress:
                blobs = [self._fields[name][s] for s in live]
                arrays[f"field{i}"] = np.frombuffer(b"".join(blobs), dtype=np.uint8)
                arrays[f"field{i}_len"] = np.array([len(b) for b in blobs], dtype=np.int64)
            else:
                arrays[f"field{i}"] = self._fields[name][live]
        return arrays

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], label: str = "replay state",
                   limiter: RateLimiter | None = None) -> "ReplayTable":
        """A table rebuilt from state_dict()'s arrays; damaged or foreign ones raise CheckpointError naming `label`."""
        try:
            table = cls._from_state(state, label)
        except CheckpointError:
            raise
        except Exception as e:  # zlib, json, shape or key errors: all mean damaged data
            raise CheckpointError(f"replay checkpoint {label} is corrupt or truncated ({type(e).__name__}: {e}); "
                                  "move it aside and resume from an earlier checkpoint") from e
        if limiter is not None:
            table.limiter = limiter
        return table

    @classmethod
    def _from_state(cls, z: Mapping[str, np.ndarray], path: str) -> "ReplayTable":
        meta = json.loads(bytes(np.asarray(z["meta"], dtype=np.uint8)).decode())
        if meta.get("format") not in (_FORMAT, _FORMAT_SHARED):
            raise CheckpointError(f"{path} is not a distrl replay checkpoint (format {meta.get('format')!r})")
        (sname, scfg), (rname, rcfg) = meta["sampler"], meta["remover"]
        if sname not in _SAMPLERS or rname not in _REMOVERS:
            raise CheckpointError(f"replay checkpoint {path} uses unknown sampler/remover {sname}/{rname}")
        t = cls(meta["capacity"], _SAMPLERS[sname](**scfg), _REMOVERS[rname](**rcfg), compress=tuple(meta["compress"]),
                codec=meta.get("codec", "zlib"),  # checkpoints from before the codec choice hold zlib
                shared=tuple(meta.get("shared", ())))
        rng_state = meta["rng"]
        t._rng = np.random.Generator(getattr(np.random, rng_state["bit_generator"])())
        t._rng.bit_generator.state = rng_state
        keys, prio, free = z["keys"], z["priorities"], z["free"]
        slots = keys & SLOT_MASK
        n_slots = int(meta["n_slots"])
        if (prio.shape != keys.shape or keys.size + free.size != n_slots
                or np.unique(np.concatenate([slots, free])).size != n_slots or (n_slots and slots.max(initial=0) >= n_slots)):
            raise ValueError("keys, priorities and free list disagree")
        if meta["fields"]:
            t._spec = {k: (tuple(shape), np.dtype(dt)) for k, shape, dt in meta["fields"]}
            t._fields = {k: ([] if k in t.compress else np.empty((0, *s), d)) for k, (s, d) in t._spec.items()}
        if n_slots:
            t._resize(n_slots)
        t._free = free.astype(np.int64)
        if meta.get("frame") is not None:
            (shape, dt), lengths = meta["frame"], (z["frames_len"] if t._frames_compressed else None)
            t._pool = FramePool(tuple(shape), np.dtype(dt), t._frames_compressed, t._inflate)
            pool_ids = t._pool.load(z["frames"], lengths)
        for i, name in enumerate(t._spec or {}):
            data = z[f"field{i}"]
            if name in t.shared:
                t._fields[name][slots] = pool_ids[data]
                assert t._pool is not None  # pool_ids exist, so does the pool
                t._pool.hold(pool_ids[data])
            elif name in t.compress:
                lens = z[f"field{i}_len"]
                if lens.shape != keys.shape or int(lens.sum()) != data.size:
                    raise ValueError(f"compressed field {name!r} has inconsistent lengths")
                buf, ends = data.tobytes(), np.cumsum(lens)
                store = t._fields[name]
                for s, a, b in zip(slots, ends - lens, ends):
                    store[s] = buf[a:b]
                t._zbytes += int(lens.sum()) + _BYTES_OVERHEAD * lens.size
            else:
                t._fields[name][slots] = data
        t._slot_key[slots] = keys
        t._priority[slots] = prio
        t._size = int(keys.size)
        t._inserts, t._samples, t._removed, t._priority_updates = (int(c) for c in meta["counters"])
        t._max_priority = float(meta["max_priority"])
        t.sampler.insert(slots, prio)
        t.remover.insert(slots, prio)
        return t
