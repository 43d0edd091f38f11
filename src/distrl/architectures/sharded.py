"""The parameter-server shards that Gorila, BA3C and A3C's sharded store share, as one part (ShardSpec):
each shard's slice of the initial parameters and its optimizer's options, and the client every role (and
the driver) reaches them all through; and the driver's view of them: the policy an evaluation gets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from distrl.params.param_server import ParamShard, ShardedParameterServer, flatten, shard_slices, unflatten_into


@dataclass(frozen=True)
class ShardSpec:
    """`count` shards over the `n_params` parameters of `make_net()` (contracts.ShardParts): shard i starts
    from its slice of a freshly built (seeded) net and applies gradients with ParamShard's `options`."""

    make_net: Callable[[], torch.nn.Module]
    n_params: int
    count: int
    options: dict[str, Any] = field(default_factory=dict)

    def slices(self) -> list[slice]:
        return shard_slices(self.n_params, self.count)  # too many shards fails here

    def shard_args(self, index: int) -> tuple[np.ndarray, dict[str, Any]]:
        return flatten(self.make_net())[self.slices()[index]], dict(self.options)

    def make_shard(self, index: int) -> ParamShard:
        values, options = self.shard_args(index)
        return ParamShard(values, **options)

    def sizes(self) -> list[int]:
        return [s.stop - s.start for s in self.slices()]

    def client(self, shards: list[Any], transport: Any) -> ShardedParameterServer:
        return ShardedParameterServer(shards, transport.call, transport.gather, sizes=self.sizes())


def flat_params(make_net: Callable[[], torch.nn.Module], flat: np.ndarray) -> dict[str, torch.Tensor]:
    """`flat` (the parameter shards' values joined) as a state dict of the net. Building the net seeds
    torch, so it is built with the run's RNG kept: an evaluation starts when the clock says, and A3C's and BA3C's
    workers sample their actions from that RNG (an inline run was not repeatable before)."""
    with torch.random.fork_rng(devices=[]):
        net = make_net()
    unflatten_into(net, flat)
    return net.state_dict()


def shards_policy(spec: ShardSpec, roles: dict[str, list[Any]], transport: Any) -> tuple[Any, int]:
    """The shards' parameters as numpy arrays for an evaluator, and their version (the minimum)."""
    flat, versions = spec.client(roles["ps"], transport).pull()
    return {k: v.numpy() for k, v in flat_params(spec.make_net, flat).items()}, int(versions.min())


def shards_policy_params(builder: Any, run_dir: Path,
                         checkpoint: Path | None = None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The parameters of `checkpoint` (default: the latest; the shards' values joined) as a state dict, for
    `distrl eval`."""
    data = builder.topology().checkpoints.restore(run_dir, path=checkpoint)
    shards = data["roles"]["ps"]
    flat = torch.cat([s["values"] for s in shards]).numpy()
    return flat_params(builder.make_net, flat), {"checkpoint": data["path"],
                                                 "updates": min(int(s["version"]) for s in shards)}
