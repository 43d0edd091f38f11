"""The inline runtime: every component in this process, stepped in turn. Deterministic for a
seed, so it is what tests and debugging use."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from distrl.architectures.a3c import A3C
from distrl.architectures.apex import Apex
from distrl.architectures.ba3c import BA3C, ba3c_counters, round_gauges
from distrl.architectures.base import Role, Wiring
from distrl.architectures.gorila import Gorila
from distrl.components.monitor import Monitor
from distrl.params.param_server import ShardedParameterServer
from distrl.runtime.driver import drive
from distrl.transport import Local


def _sum_counters(base: dict[str, int], parts: list) -> dict[str, int]:
    """`base` (a resumed run's counts) plus every part's counters()."""
    out = dict(base)
    for part in parts:
        for k, v in part.counters().items():
            out[k] = out.get(k, 0) + int(v)
    return out


class InlinePlacement:
    """Every role an object in this process, every call made at once (distrl.transport.Local)."""

    transport = Local

    @staticmethod
    def check(roles: list[Role]) -> None:
        """Nothing to check in one process."""

    @staticmethod
    def start(wiring: Wiring, role: Role, index: int, links: dict[str, list]) -> Any:
        return role.cls(wiring, index, links, Local)

    @staticmethod
    def restarts(handles: list) -> None:
        return None  # nothing restarts in one process: an error ends the run

    @staticmethod
    def stop(handles: list) -> None:
        """Objects go with the driver."""


def run_apex(arch: Apex, run_dir: Path, monitor: Monitor, resume: bool = False,
             hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Ape-X (and Ape-X DPG) in this process: a round is every actor's steps, then the learner's updates.
    `resume` needs nothing here: the roles restore themselves from the run's newest checkpoint."""
    return drive(arch, InlinePlacement(), run_dir, monitor, hook)


def run_gorila(arch: Gorila, run_dir: Path, monitor: Monitor, resume: bool = False,
               hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Gorila in this process: a round is one bundle round of each bundle; the shards restore themselves."""
    return drive(arch, InlinePlacement(), run_dir, monitor, hook)


def run_a3c(arch: A3C, run_dir: Path, monitor: Monitor, resume: bool = False,
            hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """The A3C family in this process: a round is one rollout of each worker in turn (the paper's threads,
    serialised); the store restores itself."""
    return drive(arch, InlinePlacement(), run_dir, monitor, hook)


def push_order(workers: int, round: int, seed: int) -> list[int]:
    """The order the workers push in during sync round `round`. In a fixed order the same workers
    would be late (f < 1) every round and their data would never train the model; drawn from
    (seed, round), who is late is chance, as for real stragglers, and a run, resumed or not,
    repeats its orders."""
    return [int(i) for i in np.random.default_rng([seed, round]).permutation(workers)]


def run_ba3c(arch: BA3C, run_dir: Path, monitor: Monitor, resume: bool = False) -> dict[str, Any]:
    """Workers stepped in turn. Sync: each computes a gradient on the open round's parameters and
    pushes it to the chief, in `push_order`; pushes after the round closed (f < 1) are late and
    dropped, as a slow worker's would be. Async: each worker's push is applied on arrival and it
    pulls the result."""
    cfg = arch.cfg
    data = arch.restore(run_dir) if resume else None
    base = {k: int(v) for k, v in data["counters"].items()} if data else {}
    if data:
        monitor.add_returns(list(data["returns"]))
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(cfg.ps.shards)])
    if data:
        ps.load_state_dict(data["roles"]["ps"])
    flat, versions = ps.pull()
    chief = arch.make_chief(round=int(versions.min()))
    workers = [arch.make_worker(i) for i in range(cfg.actors)]
    worker_versions = [versions] * cfg.actors
    for w in workers:
        w.load(flat)
    waits: list[float] = []

    def totals() -> dict[str, int]:
        return _sum_counters(base, workers)

    def checkpoint() -> None:
        dropped = {"dropped_late": base.get("dropped_late", 0) + chief.dropped_late}
        arch.save(run_dir, ps.updates(), {"ps": ps.state_dict()}, {**totals(), **dropped}, list(monitor.returns))

    def log() -> dict[str, float]:
        row = monitor.log(ba3c_counters(totals(), ps.updates()),
                          round_gauges(waits, chief.dropped_late + base.get("dropped_late", 0)))
        waits.clear()
        return row

    monitor.start(ba3c_counters(totals(), ps.updates()))
    last_log = time.perf_counter()
    next_checkpoint = ps.updates() + cfg.checkpoint_every
    try:
        while totals().get("frames", 0) < cfg.max_frames:
            if cfg.sync.mode == "sync":
                open_round = int(versions.min())
                for i in push_order(cfg.actors, open_round, cfg.seed):
                    mean = chief.push(workers[i].gradient(), open_round, i)
                    if mean is not None:
                        ps.push(mean, versions)
                flat, versions = ps.pull()
                for w in workers:
                    w.load(flat)
                waits += chief.drain_waits()
            else:
                for i, w in enumerate(workers):
                    flat, worker_versions[i] = ps.push_pull(w.gradient(), worker_versions[i])
                    w.load(flat)
            for w in workers:
                monitor.add_returns(w.drain_returns())
            if (rounds := ps.updates()) >= next_checkpoint:
                checkpoint()
                next_checkpoint = rounds + cfg.checkpoint_every
            if time.perf_counter() - last_log >= cfg.log_every_s:
                last_log = time.perf_counter()
                log()
        checkpoint()
    except KeyboardInterrupt:
        checkpoint()
        raise
    finally:
        for w in workers:
            w.close()
    final = log()
    evaluation = arch.make_evaluator().evaluate(arch.params(ps.pull()[0])) if cfg.eval_episodes else None
    return {"frames": int(final["frames"]), "updates": ps.updates(), "evaluation": evaluation,
            "resumed_from": data["path"] if data else None, "dropped_late": chief.dropped_late}


run_apex_dpg = run_apex  # the same loop: only the parts differ (architectures/apex_dpg.py)
