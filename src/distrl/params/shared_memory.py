"""A3C's one-host parameter store (Mnih et al. 2016): the flat parameter vector and the RMSProp
statistics live in named shared memory, so worker processes on one machine (Ray actors or
multiprocessing processes) attach by name and apply their gradients in place, Hogwild-style.

It offers the interface of `distrl.params.param_server.ShardedParameterServer` (pull, push,
push_pull, updates, counters, state_dict), as one shard, so an A3C worker can use either store."""

from __future__ import annotations

import os
import secrets
import sys
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
import torch

from distrl.algos.rmsprop import rmsprop_
from distrl.errors import CheckpointError, ConfigError

# CPython < 3.13 registers a segment with the resource tracker on attach too, and that tracker
# unlinks it when the attaching process exits (bpo-39959), so attachers unregister (or pass track=False).
_UNREGISTER_ON_ATTACH = os.name == "posix" and sys.version_info < (3, 13)
_VERSION, _APPLIED = 0, 1


def rmsprop_step(params: np.ndarray, stats: np.ndarray, grad: np.ndarray,
                 lr: float, decay: float, eps: float) -> None:
    """The paper's shared RMSProp, in place: g = decay*g + (1-decay)*grad^2; theta -= lr*grad/sqrt(g+eps).

    Non-centered, no momentum, eps inside the square root: `distrl.algos.rmsprop`'s rule, the one the
    sharded store's "rmsprop" shards apply too, run on torch views of the (shared) numpy arrays. It
    updates them in place without a lock: the Hogwild updates the paper relies on."""
    grad_t = torch.from_numpy(np.array(grad, dtype=np.float32))  # a private, writable copy
    rmsprop_(torch.from_numpy(params), grad_t, torch.from_numpy(stats), lr=lr, decay=decay, eps=eps)


class SharedMemoryParams:
    """A handle on the shared store; `create` makes the owner's, `attach(spec)` a worker's.

    Nothing is locked: updates from several processes may interleave element by element (Hogwild,
    as in the paper), and the version/applied counters are plain read-modify-writes, so under
    concurrent pushes they may miss a few increments; they are approximate by design."""

    def __init__(self, segments: dict[str, SharedMemory], spec: dict[str, Any]):
        """Use `create` or `attach`."""
        self._segments, self._spec = segments, spec
        n = spec["size"]
        self.lr, self.decay, self.eps = spec["lr"], spec["decay"], spec["eps"]
        self.shared_stats = spec["stats"] is not None
        self._params = np.ndarray((n,), dtype=np.float32, buffer=segments["params"].buf)
        # shared_stats=False: the paper's alternative, each handle keeps its own statistics.
        self._stats = (np.ndarray((n,), dtype=np.float32, buffer=segments["stats"].buf) if self.shared_stats
                       else np.zeros(n, dtype=np.float32))
        self._counters = np.ndarray((2,), dtype=np.int64, buffer=segments["counters"].buf)

    @classmethod
    def create(cls, initial: np.ndarray, *, lr: float = 7e-4, decay: float = 0.99, eps: float = 0.1,
               shared_stats: bool = True, anneal_updates: int | None = None,
               name_prefix: str | None = None) -> SharedMemoryParams:
        """The owner's handle: new segments holding `initial`, zero statistics and zero counters. With
        `anneal_updates`, the rate falls linearly from lr to 0 over that many updates (A3C's schedule)."""
        initial = np.asarray(initial, dtype=np.float32).reshape(-1)
        if initial.size == 0:
            raise ConfigError("shared parameter store needs at least one parameter, got an empty vector")
        if not (lr > 0 and 0 <= decay < 1 and eps > 0):
            raise ConfigError(f"shared RMSProp needs lr > 0, 0 <= decay < 1 and eps > 0, "
                              f"got lr={lr}, decay={decay}, eps={eps}")
        prefix = name_prefix or f"distrl-{secrets.token_hex(4)}"   # short: macOS allows 31 characters
        sizes = {"params": initial.nbytes, "counters": 2 * 8}
        if shared_stats:
            sizes["stats"] = initial.nbytes
        segments: dict[str, SharedMemory] = {}
        try:
            for key, nbytes in sizes.items():
                segments[key] = SharedMemory(name=f"{prefix}-{key}", create=True, size=nbytes)
        except BaseException:
            for shm in segments.values():
                shm.close()
                shm.unlink()
            raise
        spec = {"params": segments["params"].name, "counters": segments["counters"].name,
                "stats": segments["stats"].name if shared_stats else None,
                "size": int(initial.size), "lr": float(lr), "decay": float(decay), "eps": float(eps),
                "anneal_updates": anneal_updates}
        store = cls(segments, spec)
        store._params[:] = initial
        store._stats[:] = 0.0
        store._counters[:] = 0
        return store

    @classmethod
    def attach(cls, spec: dict[str, Any]) -> SharedMemoryParams:
        """A worker's handle on the segments named in `spec` (from `.spec()`); FileNotFoundError once unlinked."""
        segments: dict[str, SharedMemory] = {}
        try:
            for key in ("params", "stats", "counters"):
                if spec[key] is None:
                    continue
                if _UNREGISTER_ON_ATTACH:
                    segments[key] = shm = SharedMemory(name=spec[key])
                    resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
                else:
                    segments[key] = SharedMemory(name=spec[key], track=False)  # type: ignore[call-arg]
        except BaseException:
            for shm in segments.values():
                shm.close()
            raise
        return cls(segments, dict(spec))

    def spec(self) -> dict[str, Any]:
        """What a worker in another process needs to attach: names, size and hyperparameters (picklable)."""
        return dict(self._spec)

    def size(self) -> int:
        return self._spec["size"]

    def pull(self) -> tuple[np.ndarray, np.ndarray]:
        """(a copy of the flat parameters, [version]): one shard's worth of ShardedParameterServer.pull."""
        return self._params.copy(), np.array([self._counters[_VERSION]], dtype=np.int64)

    def push(self, flat_grad: np.ndarray, versions: Any = None, wait: bool = True) -> np.ndarray:
        """Apply `flat_grad` now. `versions` and `wait` are accepted for the parameter server's
        interface: A3C bounds no staleness and the update is done before returning."""
        flat_grad = np.asarray(flat_grad, dtype=np.float32)
        if flat_grad.shape != (self.size(),):
            raise ValueError(f"push needs a flat gradient of {self.size()} values, got shape {flat_grad.shape}")
        rmsprop_step(self._params, self._stats, flat_grad, self.current_lr(), self.decay, self.eps)
        self._counters[_VERSION] += 1
        self._counters[_APPLIED] += 1
        return np.array([True])

    def current_lr(self) -> float:
        anneal = self._spec.get("anneal_updates")
        return self.lr * max(0.0, 1.0 - int(self._counters[_VERSION]) / anneal) if anneal else self.lr

    def push_pull(self, flat_grad: np.ndarray, versions: Any = None) -> tuple[np.ndarray, np.ndarray]:
        self.push(flat_grad, versions)
        return self.pull()

    def updates(self) -> int:
        return self.counters()["version"]

    def counters(self) -> dict[str, int]:
        """The parameter server's keys, so monitors read either store (one shard, nothing dropped)."""
        version = int(self._counters[_VERSION])
        return {"version": version, "max_version": version, "applied": int(self._counters[_APPLIED]),
                "dropped_stale": 0}

    def state_dict(self) -> dict[str, Any]:
        """Tensors and python scalars only, so it loads with torch.load(weights_only=True). The
        statistics are this handle's: the shared ones, or its private ones with shared_stats=False."""
        import torch
        return {"values": torch.from_numpy(self._params.copy()), "stats": torch.from_numpy(self._stats.copy()),
                "shared_stats": self.shared_stats, "lr": self.lr, "decay": self.decay, "eps": self.eps,
                "version": int(self._counters[_VERSION]), "applied": int(self._counters[_APPLIED])}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        values, stats = state["values"], state["stats"]
        if tuple(values.shape) != (self.size(),) or tuple(stats.shape) != (self.size(),):
            raise CheckpointError(f"shared parameter checkpoint holds {values.numel()} values, this store has "
                                  f"{self.size()}: resume with the same network")
        self._params[:] = values.numpy()
        self._stats[:] = stats.numpy()
        self._counters[_VERSION], self._counters[_APPLIED] = int(state["version"]), int(state["applied"])

    def close(self) -> None:
        """Detach this handle (the segments live on until the owner unlinks them)."""
        # The numpy views export the buffers; drop them first or SharedMemory.close raises BufferError.
        self._params = self._stats = self._counters = None  # type: ignore[assignment]
        for shm in self._segments.values():
            shm.close()

    def unlink(self) -> None:
        """Free the segments (the owner, once the workers are done); mapped handles keep working."""
        for shm in self._segments.values():
            if _UNREGISTER_ON_ATTACH:
                # A worker sharing this process's tracker (one spawned from it) unregistered the name on
                # attach; register it again so unlink's own unregister does not fail inside the tracker.
                resource_tracker.register(shm._name, "shared_memory")  # type: ignore[attr-defined]
            shm.unlink()
