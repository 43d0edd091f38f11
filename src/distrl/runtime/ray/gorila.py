"""Gorila on Ray: each bundle (actor + replay + learner), each parameter-server shard, the shared table
(replay.mode=global) and the evaluator a Ray actor, driven by runtime/driver.py.

Faults: Ray restarts every one of them. A dead bundle loses its local replay and unsent transitions;
the others go on. A restarted shard loads its slice of the newest checkpoint (values, optimizer state,
version) and training goes on; bundles that called it meanwhile wait (ps_waits) and skip that round."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.architectures.gorila import Gorila
from distrl.components.monitor import Monitor
from distrl.runtime.driver import drive
from distrl.runtime.ray.placement import ray_placement


def run_gorila(arch: Gorila, run_dir: Path, monitor: Monitor, resume: bool = False,
               hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """`resume` needs nothing here: the shards restore themselves from the run's newest checkpoint."""
    cfg = arch.cfg
    with ray_placement(cfg.address, cfg.actors + cfg.ps.shards + 3) as placement:  # + shared table, evaluator
        return drive(arch, placement, run_dir, monitor, hook)
