"""A sharded parameter server (Gorila): the flat parameter vector split into disjoint shards, each
applying the gradients it receives with its own optimizer state and version counter.

`ParamShard` is a plain class; the Ray runtime wraps it in one actor per shard. The client
`ShardedParameterServer` never imports a transport: as in `distrl.replay.sharded`, `call(shard,
method, *args)` starts a call and `gather(list)` waits for several, so local shards and actor
handles go through the same code. Every shard's update rule is elementwise (AdaGrad, RMSProp, Adam,
SGD), so updating shard by shard equals updating the whole vector at once."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from distrl.algos.rmsprop import RMSProp
from distrl.errors import CheckpointError, ConfigError
from distrl.transport import local_call, local_gather

OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "adagrad": torch.optim.Adagrad,  # Gorila
    "rmsprop": RMSProp,  # A3C: eps inside the square root, as the shared-memory store
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
}
# Gorila uses AdaGrad but states no learning rate (neither the paper nor its summary); 0.01 is
# torch's own AdaGrad default.
DEFAULT_LR = 0.01


def shard_slices(n_params: int, n_shards: int) -> list[slice]:
    """Contiguous, disjoint slices covering range(n_params); the first n_params % n_shards are one longer."""
    if not 1 <= n_shards <= n_params:
        raise ConfigError(f"cannot split {n_params} parameters into {n_shards} shards: "
                          f"set the number of parameter shards between 1 and {n_params}")
    base, extra = divmod(n_params, n_shards)
    bounds = np.cumsum([0] + [base + (i < extra) for i in range(n_shards)])
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


class ParamShard:
    """One slice of the parameter vector with its own optimizer state and version counter.

    Staleness is measured in this shard's own updates (the paper bounds the "time delay" between a
    learner's parameters and the server's, without a number): a gradient computed on version v is
    dropped when `version - v > staleness_bound`; `None` never drops. With `anneal_updates`, the
    learning rate falls linearly from `lr` at version 0 to 0 at that version (A3C's schedule)."""

    def __init__(self, values: np.ndarray | torch.Tensor, optimizer: str = "adagrad", lr: float = DEFAULT_LR,
                 staleness_bound: int | None = None, anneal_updates: int | None = None, **optimizer_kwargs: Any):
        if optimizer not in OPTIMIZERS:
            raise ConfigError(f"unknown optimizer {optimizer!r}: use one of {', '.join(OPTIMIZERS)}")
        if staleness_bound is not None and staleness_bound < 0:
            raise ConfigError(f"staleness bound {staleness_bound} is negative: use an integer >= 0, or none")
        if anneal_updates is not None and anneal_updates < 1:
            raise ConfigError(f"anneal_updates {anneal_updates} must be >= 1, or none for a constant learning rate")
        self.optimizer_name, self.staleness_bound = optimizer, staleness_bound
        self.lr, self.anneal_updates = lr, anneal_updates
        self._param = torch.as_tensor(values, dtype=torch.float32).detach().reshape(-1).clone().requires_grad_()
        self._opt = OPTIMIZERS[optimizer]([self._param], lr=lr, **optimizer_kwargs)
        self.version = 0        # updates applied: the staleness clock
        self.applied = 0        # pushes applied (equal to version until a sync mode averages a round)
        self.dropped_stale = 0

    def size(self) -> int:
        return self._param.numel()

    def pull(self) -> tuple[np.ndarray, int]:
        return self._param.detach().numpy().copy(), self.version

    def push(self, grad: np.ndarray | torch.Tensor, version: int) -> bool:
        """Apply `grad` now unless it is too stale; returns whether it was applied."""
        grad = torch.as_tensor(grad, dtype=torch.float32)
        if tuple(grad.shape) != (self.size(),):
            raise ValueError(f"gradient shape {tuple(grad.shape)} does not fit this shard: "
                             f"expected ({self.size()},), got {grad.numel()} elements")
        if self.staleness_bound is not None and self.version - int(version) > self.staleness_bound:
            self.dropped_stale += 1
            return False
        self._param.grad = grad.clone()
        if self.anneal_updates is not None:
            for group in self._opt.param_groups:
                group["lr"] = self.lr * max(0.0, 1.0 - self.version / self.anneal_updates)
        self._opt.step()
        self._param.grad = None
        self.version += 1
        self.applied += 1
        return True

    def push_pull(self, grad: np.ndarray | torch.Tensor, version: int) -> tuple[np.ndarray, int]:
        """Push, then pull: one round trip for a learner that pulls after every push (K = 1)."""
        self.push(grad, version)
        return self.pull()

    def counters(self) -> dict[str, int]:
        return {"version": self.version, "applied": self.applied, "dropped_stale": self.dropped_stale}

    def state_dict(self) -> dict[str, Any]:
        """Tensors and python scalars only, so it loads with torch.load(weights_only=True)."""
        return {"values": self._param.detach().clone(), "optimizer_name": self.optimizer_name,
                "optimizer": self._opt.state_dict(), **self.counters()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        values = state["values"]
        if tuple(values.shape) != (self.size(),) or state["optimizer_name"] != self.optimizer_name:
            raise CheckpointError(
                f"parameter shard checkpoint holds {values.numel()} values for {state['optimizer_name']}, "
                f"this shard has {self.size()} for {self.optimizer_name}: resume with the same network and shards")
        with torch.no_grad():
            self._param.copy_(values)
        self._opt.load_state_dict(state["optimizer"])
        self.version, self.applied, self.dropped_stale = (
            int(state["version"]), int(state["applied"]), int(state["dropped_stale"]))

    def pid(self) -> int:
        return os.getpid()


def local_shards(values: np.ndarray, n_shards: int, **shard_kwargs: Any) -> list[ParamShard]:
    """In-process shards over `values` split by `shard_slices` (the Ray runtime builds actors instead)."""
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    return [ParamShard(values[s], **shard_kwargs) for s in shard_slices(values.size, n_shards)]


class ShardedParameterServer:
    """The client over N shards, in order; every multi-shard call starts all shards before gathering."""

    def __init__(self, shards: Sequence[Any], call: Callable[..., Any] = local_call,
                 gather: Callable[[list], list] = local_gather, sizes: Sequence[int] | None = None):
        """`sizes`, when known, saves asking every shard (which may be restarting) at construction."""
        if not shards:
            raise ValueError("ShardedParameterServer needs at least one shard")
        self.shards, self.call, self.gather = list(shards), call, gather
        bounds = np.cumsum([0] + [int(n) for n in (sizes if sizes is not None else self._all("size"))])
        self.slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
        self.n_params = int(bounds[-1])

    def _all(self, method: str, *per_shard_args: Sequence[Any]) -> list:
        return self.gather([self.call(s, method, *(a[i] for a in per_shard_args))
                            for i, s in enumerate(self.shards)])

    def pull(self) -> tuple[np.ndarray, np.ndarray]:
        """(the flat parameter vector, the version of each shard)."""
        parts = self._all("pull")
        return np.concatenate([v for v, _ in parts]), np.array([ver for _, ver in parts], dtype=np.int64)

    def _check_push(self, flat_grad: np.ndarray, versions: Sequence[int]) -> np.ndarray:
        flat_grad = np.asarray(flat_grad, dtype=np.float32)
        if flat_grad.shape != (self.n_params,) or len(versions) != len(self.shards):
            raise ValueError(f"push needs a flat gradient of {self.n_params} values and {len(self.shards)} "
                             f"versions, got shape {flat_grad.shape} and {len(versions)} versions")
        return flat_grad

    def push_pull(self, flat_grad: np.ndarray, versions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """push() then pull() in one call per shard: (the new flat vector, each shard's version)."""
        flat_grad = self._check_push(flat_grad, versions)
        parts = self._all("push_pull", [flat_grad[s] for s in self.slices], [int(v) for v in versions])
        return np.concatenate([v for v, _ in parts]), np.array([ver for _, ver in parts], dtype=np.int64)

    def push(self, flat_grad: np.ndarray, versions: Sequence[int], wait: bool = True) -> np.ndarray | list:
        """Push a gradient computed on the parameters pulled at `versions`; which shards applied it.

        With wait=False the calls are only started (their handles returned): a shard serves one
        caller's calls in order, so the caller's next pull still sees this push applied (or dropped)."""
        flat_grad = self._check_push(flat_grad, versions)
        calls = [self.call(shard, "push", flat_grad[s], int(v))
                 for shard, s, v in zip(self.shards, self.slices, versions)]
        return np.array(self.gather(calls), dtype=bool) if wait else calls

    def updates(self) -> int:
        """The global update count for Gorila's target refresh, counted at the PS: the minimum shard
        version, i.e. updates every shard has applied (a gradient one shard dropped as stale is not an
        update of the whole model). It only grows, and equals the pushes applied when none is dropped."""
        return self.counters()["version"]

    def counters(self) -> dict[str, int]:
        """version: min over shards (= updates()); max_version: the furthest shard; applied and
        dropped_stale: summed over shards, so one push to N shards counts N."""
        return shard_counters(self._all("counters"))

    def state_dict(self) -> list[dict[str, Any]]:
        return self._all("state_dict")

    def load_state_dict(self, states: Sequence[dict[str, Any]]) -> None:
        if len(states) != len(self.shards):
            raise CheckpointError(f"checkpoint holds {len(states)} parameter shards, this server has "
                                  f"{len(self.shards)}: resume with the same number of shards")
        self._all("load_state_dict", list(states))


class ParamServerSource:
    """An actor's ParameterSource over a parameter server: the pulled vector as a state dict, with
    the global update count (the minimum shard version) as its version."""

    def __init__(self, ps: ShardedParameterServer, template: torch.nn.Module):
        self.ps, self.template = ps, template

    def latest(self) -> tuple[dict[str, torch.Tensor], int]:
        flat, versions = self.ps.pull()
        unflatten_into(self.template, flat)
        return self.template.state_dict(), int(versions.min())


def flatten(module: torch.nn.Module) -> np.ndarray:
    return parameters_to_vector(module.parameters()).detach().cpu().numpy().astype(np.float32)


def flat_grad(module: torch.nn.Module) -> np.ndarray:
    """The gradient as one flat vector in parameter order (zeros where a parameter has none)."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in module.parameters()]
    return parameters_to_vector(grads).detach().cpu().numpy().astype(np.float32)


def unflatten_into(module: torch.nn.Module, flat: np.ndarray) -> None:
    """Copy `flat` into the module's parameters (a copy, so the module never aliases the array)."""
    params = list(module.parameters())
    n = sum(p.numel() for p in params)
    flat = np.asarray(flat).reshape(-1)
    if flat.size != n:
        raise ValueError(f"flat parameter vector has {flat.size} values, the module expects {n}")
    vector_to_parameters(torch.tensor(flat, dtype=params[0].dtype, device=params[0].device), params)


def shard_counters(parts: Sequence[dict[str, int]]) -> dict[str, int]:
    """The server's counters from its shards' (ShardedParameterServer.counters says what each means)."""
    versions = [c["version"] for c in parts]
    return {"version": min(versions), "max_version": max(versions),
            "applied": sum(c["applied"] for c in parts), "dropped_stale": sum(c["dropped_stale"] for c in parts)}
