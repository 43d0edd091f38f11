"""The A3C family on Ray: each actor-learner, each parameter-server shard (ps.store=sharded) and the
evaluator a Ray actor, driven by runtime/driver.py. With ps.store=shared the driver's process owns the
store and every worker attaches it by name, so the workers must share the driver's host.

Faults: Ray restarts a dead worker (it re-attaches and goes on; its unfinished rollout is lost) and a
dead shard (from its slice of the newest checkpoint); workers that called it meanwhile wait (ps_waits)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.architectures.a3c import A3C
from distrl.components.monitor import Monitor
from distrl.runtime.driver import drive
from distrl.runtime.ray.placement import ray_placement


def run_a3c(arch: A3C, run_dir: Path, monitor: Monitor, resume: bool = False,
            hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """`resume` needs nothing here: the store restores itself from the run's newest checkpoint."""
    cfg = arch.cfg
    with ray_placement(cfg.address, cfg.actors + cfg.ps.shards + 2) as placement:  # + evaluator
        return drive(arch, placement, run_dir, monitor, hook)
