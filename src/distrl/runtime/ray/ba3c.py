"""Distributed BA3C on Ray: one actor per parameter-server shard, one per worker, and the chief.

Sync mode: a worker pushes its gradient to the chief and its call returns when the round it
pushed for is closed and applied to the shards (or at once when the gradient was late); then it
pulls the new parameters from the shards. Async mode has no chief: each worker pushes to the
shards and pulls the result in one round trip.

Faults: Ray restarts every actor. A restarted shard loads its slice of the newest checkpoint (the
driver writes one every `checkpoint_every` rounds); a restarted chief opens the round the shards
are at; a restarted worker pulls and goes on."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.exceptions import GetTimeoutError, RayActorError

from distrl import config as C
from distrl.architectures.ba3c import BA3C, ba3c_counters, round_gauges
from distrl.components.monitor import Monitor
from distrl.components.workers import Deltas
from distrl.params.param_server import ShardedParameterServer
from distrl.params.sync_chief import SyncChief
from distrl.runtime.ray.cluster import RESTART, call, connect, numpy_params, retry
from distrl.runtime.ray.hosts import EvaluatorHost, ShardHost
from distrl.runtime.ray.reports import collect_reports, poll_eval, saved_on_interrupt, sync_restarts


class ChiefHost:
    """The chief in its own process: an asyncio actor, so a push can wait for its round to close
    while the other workers' pushes come in."""

    def __init__(self, workers: int, fraction: float, shards: list, sizes: list[int]):
        self.ps = ShardedParameterServer(shards, call, ray.get, sizes=sizes)
        self.workers, self.fraction = workers, fraction
        self.chief: SyncChief | None = None  # opened at the shards' round by the first push
        self._closed: dict[int, asyncio.Event] = {}  # round -> set once its mean is on the shards
        self._applying: int | None = None
        self._released = False
        self._opening: asyncio.Future | None = None

    async def _open(self) -> None:
        versions = await asyncio.gather(*[shard.counters.remote() for shard in self.ps.shards])
        # max: a shard restored from a checkpoint lags the others by the rounds it lost
        self.chief = SyncChief(self.workers, self.fraction, round=max(v["version"] for v in versions))

    async def push(self, grad: np.ndarray, round: int, worker: int) -> int:
        """Returns the round now open, once the pushed-for round is applied (at once if late)."""
        if self.chief is None:
            self._opening = self._opening or asyncio.ensure_future(self._open())
            await self._opening
        if round > self.chief.round:  # numbered by the chief before a restart that reopened lower
            self.chief.dropped_late += 1
            return self.chief.round
        mean = self.chief.push(grad, round, worker)
        if mean is not None:
            self._applying = round
            await asyncio.gather(*self.ps.push(mean, [round] * len(self.ps.shards), wait=False))
            self._applying = None
            self._closed.pop(round, asyncio.Event()).set()
        elif round in (self.chief.round, self._applying) and not self._released:
            await self._closed.setdefault(round, asyncio.Event()).wait()
        return self.chief.round

    def release(self) -> None:
        """The run is over: nothing waits for a round any more (the workers still out would otherwise
        wait for pushes from workers that get no further calls)."""
        self._released = True
        for event in self._closed.values():
            event.set()

    def report(self) -> dict:
        if self.chief is None:
            return {"rounds": 0, "accepted": 0, "dropped_late": 0, "waits": []}
        return {**self.chief.counters(), "waits": self.chief.drain_waits()}


class BA3CWorkerHost:
    """One worker in its own process; reports progress as deltas per call. `delay_s` makes each
    gradient that much slower (tests of stragglers)."""

    def __init__(self, cfg_dict: dict, index: int, shards: list, chief: Any, delay_s: float = 0.0):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(cfg.torch_threads or 1)
        arch = BA3C(cfg)
        self.index, self.chief, self.delay_s, self.sync = index, chief, delay_s, cfg.sync.mode == "sync"
        self.ps = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
        self.worker = arch.make_worker(index)
        self.waits = 0
        self._pull()
        # The round a gradient is for: the chief's reply to the last push. Not the shard versions: a
        # shard restored from a checkpoint lags, and every gradient labelled by it would be late.
        self.round = int(self.versions.max())
        self._deltas = Deltas(self.worker.counters())

    def _waited(self) -> None:
        self.waits += 1
        time.sleep(0.2)

    def _pull(self) -> None:
        flat, self.versions = retry(self.ps.pull, self._waited)
        self.worker.load(flat)

    def run(self, gradients: int) -> dict:
        try:
            for _ in range(gradients):
                grad = self.worker.gradient()
                if self.delay_s:
                    time.sleep(self.delay_s)
                if self.sync:
                    self.round = ray.get(self.chief.push.remote(grad, self.round, self.index))
                    self._pull()
                else:
                    flat, self.versions = self.ps.push_pull(grad, self.versions)
                    self.worker.load(flat)
        except RayActorError:
            self._waited()  # the chief or a shard is restarting: pull again and go on next call
            self._pull()
            self.round = int(self.versions.max())
        return {"counters": self._deltas(self.worker.counters()), "returns": self.worker.drain_returns(),
                "pid": os.getpid()}

    def pid(self) -> int:
        return os.getpid()


def start_ba3c(arch: BA3C, run_dir: Path, delays: list[float] | None = None) -> tuple[list, Any, list]:
    """(shards, chief or None, workers) as actors; `delays` gives each worker's delay_s."""
    cfg, cfg_dict = arch.cfg, C.to_dict(arch.cfg)
    shard_cls = ray.remote(ShardHost).options(num_cpus=1, **RESTART)
    shards = [shard_cls.remote(cfg_dict, i, str(Path(run_dir).resolve())) for i in range(cfg.ps.shards)]
    chief = ray.remote(ChiefHost).options(num_cpus=1, max_concurrency=max(16, 2 * cfg.actors), **RESTART).remote(
        cfg.actors, cfg.sync.fraction, shards, arch.shard_sizes()) if cfg.sync.mode == "sync" else None
    # Two threads: pid() (and any other quick call) answers while run() waits for its round to close;
    # the driver never has two run() calls out to one worker.
    worker_cls = ray.remote(BA3CWorkerHost).options(num_cpus=1, max_concurrency=2, **RESTART)
    workers = [worker_cls.remote(cfg_dict, i, shards, chief, (delays or [0.0] * cfg.actors)[i])
               for i in range(cfg.actors)]
    return shards, chief, workers


def _rounds(ps: ShardedParameterServer) -> int:
    """Rounds applied: the furthest shard's version (a shard restored from a checkpoint lags)."""
    return ps.counters()["max_version"]


def run_ba3c(arch: BA3C, run_dir: Path, monitor: Monitor, resume: bool = False,
             hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    cfg = arch.cfg
    started = connect(cfg.address, cfg.actors + cfg.ps.shards + 3)
    try:
        return _drive(arch, cfg, Path(run_dir), monitor, arch.restore(Path(run_dir), required=resume), hook)
    finally:
        if started:
            ray.shutdown()


def _drive(arch: BA3C, cfg: C.BA3CConfig, run_dir: Path, monitor: Monitor, data: dict | None,
           hook: Callable[[dict], None] | None) -> dict[str, Any]:
    shards, chief, workers = start_ba3c(arch, run_dir)
    ps = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
    evaluator = ray.remote(EvaluatorHost).options(num_cpus=1, **RESTART).remote(C.to_dict(cfg)) \
        if cfg.eval_episodes else None
    totals: dict[str, int] = {k: int(v) for k, v in (data["counters"] if data else {}).items()}
    if data:
        monitor.add_returns(list(data["returns"]))
    faults = {"worker_restarts": 0}
    pids: dict[int, int] = {}
    chief_state = {"dropped_late": 0, "waits": []}
    dropped_base = totals.pop("dropped_late", 0)
    rounds = _rounds(ps)
    state = {"workers": workers, "ps": shards, "chief": chief, "totals": totals, "faults": faults,
             "run_dir": run_dir}

    def poll_chief() -> None:
        if chief is None:
            return
        try:
            out = ray.get(chief.report.remote(), timeout=30)
        except (RayActorError, GetTimeoutError):
            return
        chief_state["dropped_late"] = out["dropped_late"]  # a restarted chief counts from zero again
        chief_state["waits"] += out["waits"]

    def log() -> dict[str, float]:
        poll_chief()
        sync_restarts(faults, "worker_restarts", workers)
        row = monitor.log(ba3c_counters(totals, rounds),
                          {**round_gauges(chief_state["waits"], dropped_base + chief_state["dropped_late"]), **faults})
        chief_state["waits"] = []
        return row

    def checkpoint() -> Path:
        counts = {**totals, "dropped_late": dropped_base + chief_state["dropped_late"]}
        return arch.save(run_dir, rounds, {"ps": ps.state_dict()}, counts, list(monitor.returns))

    monitor.start(ba3c_counters(totals, rounds))
    calls = cfg.ray.rounds_per_call
    pending = {workers[i].run.remote(calls): i for i in range(cfg.actors)}
    evaluations: list[dict] = []
    eval_ref, next_eval = None, rounds + cfg.eval_every
    next_checkpoint = rounds + cfg.checkpoint_every
    last_log = time.perf_counter()
    with saved_on_interrupt(checkpoint):
        while totals.get("frames", 0) < cfg.max_frames:
            for i in collect_reports(pending, totals, monitor, faults, "worker_restarts", pids):
                pending[workers[i].run.remote(calls)] = i
            eval_ref = poll_eval(eval_ref, evaluations, monitor)
            try:
                rounds = _rounds(ps)
                if rounds >= next_checkpoint:
                    checkpoint()
                    next_checkpoint = rounds + cfg.checkpoint_every
                if cfg.eval_every and cfg.eval_episodes and eval_ref is None and rounds >= next_eval:
                    eval_ref = evaluator.evaluate.remote(numpy_params(arch.params(ps.pull()[0])), rounds)
                    next_eval = rounds + cfg.eval_every
            except RayActorError:
                pass  # a shard is restarting: try again at the next tick
            if time.perf_counter() - last_log >= cfg.log_every_s:
                last_log = time.perf_counter()
                log()
            if hook is not None:
                hook(state)
    if chief is not None:
        retry(lambda: ray.get(chief.release.remote()), lambda: time.sleep(0.2))
    collect_reports(pending, totals, monitor, faults, "worker_restarts", pids, timeout=None)
    flat, versions = ps.pull()
    rounds = int(versions.max())
    final = log()
    checkpoint()
    evaluation = ray.get(evaluator.evaluate.remote(numpy_params(arch.params(flat)), rounds)) if cfg.eval_episodes else None
    for handle in [*workers, *shards, *([chief] if chief else []), *([evaluator] if evaluator else [])]:
        ray.kill(handle)
    return {"frames": int(final["frames"]), "updates": rounds, "evaluation": evaluation,
            "resumed_from": data["path"] if data else None, "evaluations": evaluations,
            "faults": {**faults, "dropped_late": int(final["dropped_late"])}}
