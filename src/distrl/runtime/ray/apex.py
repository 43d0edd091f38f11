"""Ape-X and Ape-X DPG on Ray: replay shards, one learner, N actors and an evaluator, each a Ray actor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.architectures.apex import Apex
from distrl.components.monitor import Monitor
from distrl.runtime.driver import drive
from distrl.runtime.ray.placement import ray_placement


def run_apex(arch: Apex, run_dir: Path, monitor: Monitor, resume: bool = False,
             hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """`resume` needs nothing here: the roles restore themselves from the run's newest checkpoint."""
    cfg = arch.cfg
    with ray_placement(cfg.address, cfg.actors + cfg.replay.shards + 2) as placement:  # + learner, evaluator
        return drive(arch, placement, run_dir, monitor, hook)


run_apex_dpg = run_apex  # the same driver: only the parts differ (architectures/apex_dpg.py)
