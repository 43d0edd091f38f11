"""The A3C family on Ray: one actor per actor-learner. With `ps.store=shared` the driver owns a
SharedMemoryParams and every worker attaches it by name (they must share the driver's host); with
`ps.store=sharded` the parameters live in shard actors (any host), as for Gorila.

Faults: Ray restarts a dead worker (it re-attaches and goes on; its unfinished rollout is lost) and
a dead shard (from its slice of the latest checkpoint, which the driver writes every
`checkpoint_every` global updates)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
import torch
from ray.exceptions import GetTimeoutError, RayActorError

from distrl import config as C
from distrl.architectures.a3c import A3C, a3c_counters
from distrl.components.monitor import Monitor
from distrl.components.workers import Deltas
from distrl.params.param_server import ShardedParameterServer
from distrl.runtime.ray.cluster import RESTART, call, connect, numpy_params, retry
from distrl.runtime.ray.hosts import EvaluatorHost, ShardHost
from distrl.runtime.ray.reports import collect_reports, poll_eval, saved_on_interrupt, sync_restarts


class ActorLearnerHost:
    """One actor-learner in its own process; reports progress as deltas per call."""

    def __init__(self, cfg_dict: dict, index: int, spec: dict | None, shards: list | None):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(cfg.torch_threads or 1)
        arch = A3C(cfg)
        if spec is not None:
            from distrl.params.shared_memory import SharedMemoryParams
            store = SharedMemoryParams.attach(spec)
        else:
            store = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
        self.waits = 0
        self.worker = retry(lambda: arch.make_worker(index, store), self._waited)
        self._deltas = Deltas(self.worker.counters())

    def _waited(self) -> None:
        self.waits += 1
        time.sleep(0.2)

    def run(self, steps: int, global_frames: int) -> dict:
        try:
            self.worker.run(steps, global_frames)
        except RayActorError:
            self._waited()  # a shard is restarting: report what was done, try again next call
        return {"counters": self._deltas(self.worker.counters()), "returns": self.worker.drain_returns(),
                "pid": os.getpid()}

    def pid(self) -> int:
        return os.getpid()


def run_a3c(arch: A3C, run_dir: Path, monitor: Monitor, resume: bool = False,
            hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    cfg = arch.cfg
    started = connect(cfg.address, cfg.actors + cfg.ps.shards + 2)
    owner = None
    try:
        data = arch.restore(Path(run_dir), required=resume)
        if cfg.ps.store == "shared":
            owner = arch.create_shared_store()
            if data:
                arch.load_store(owner, data["roles"]["ps"])
        return _drive(arch, cfg, Path(run_dir), monitor, data, owner, hook)
    finally:
        if owner is not None:
            owner.close()
            owner.unlink()
        if started:
            ray.shutdown()


def _drive(arch: A3C, cfg: C.A3CConfig, run_dir: Path, monitor: Monitor, data: dict | None, owner: Any,
           hook: Callable[[dict], None] | None) -> dict[str, Any]:
    cfg_dict = C.to_dict(cfg)
    shards = None
    if owner is not None:
        store, spec = owner, owner.spec()
    else:
        shard_cls = ray.remote(ShardHost).options(num_cpus=1, **RESTART)
        shards = [shard_cls.remote(cfg_dict, i, str(run_dir.resolve())) for i in range(cfg.ps.shards)]
        store, spec = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes()), None
    worker_cls = ray.remote(ActorLearnerHost).options(num_cpus=1, **RESTART)
    workers = [worker_cls.remote(cfg_dict, i, spec, shards) for i in range(cfg.actors)]
    evaluator = ray.remote(EvaluatorHost).options(num_cpus=1, **RESTART).remote(cfg_dict) \
        if cfg.eval_episodes else None
    totals: dict[str, int] = {k: int(v) for k, v in (data["counters"] if data else {}).items()}
    if data:
        monitor.add_returns(list(data["returns"]))
    faults = {"worker_restarts": 0}
    pids: dict[int, int] = {}
    last: dict[str, float] = {}
    state = {"workers": workers, "ps": shards or [], "totals": totals, "faults": faults,
             "run_dir": run_dir}

    def counters() -> dict[str, float]:
        nonlocal last
        sync_restarts(faults, "worker_restarts", workers)
        try:
            last = a3c_counters(totals, store.counters())
        except (RayActorError, GetTimeoutError):
            last = {**last, **a3c_counters(totals, {"version": last.get("learner/updates", 0)})}
        return last

    def checkpoint() -> Path:
        return arch.save(run_dir, totals.get("updates", 0), {"ps": arch.store_states(store)}, totals,
                         list(monitor.returns))

    monitor.start(counters())
    steps = cfg.ray.steps_per_call
    pending = {workers[i].run.remote(steps, totals.get("frames", 0)): i for i in range(cfg.actors)}
    evaluations: list[dict] = []
    eval_ref, next_eval = None, cfg.eval_every
    next_checkpoint = totals.get("updates", 0) + cfg.checkpoint_every
    last_log = time.perf_counter()
    with saved_on_interrupt(checkpoint):
        while totals.get("frames", 0) < cfg.max_frames:
            for i in collect_reports(pending, totals, monitor, faults, "worker_restarts", pids):  # a restarted one re-attaches
                pending[workers[i].run.remote(steps, totals.get("frames", 0))] = i
            eval_ref = poll_eval(eval_ref, evaluations, monitor)
            try:
                if totals.get("updates", 0) >= next_checkpoint:
                    checkpoint()
                    next_checkpoint += cfg.checkpoint_every
                if time.perf_counter() - last_log >= cfg.log_every_s:
                    last_log = time.perf_counter()
                    monitor.log(counters(), dict(faults))
                    if cfg.eval_every and cfg.eval_episodes and eval_ref is None and totals.get("updates", 0) >= next_eval:
                        eval_ref = evaluator.evaluate.remote(numpy_params(arch.params(store.pull()[0])), totals["updates"])
                        next_eval += cfg.eval_every
            except RayActorError:
                pass  # a shard is restarting: try again at the next tick
            if hook is not None:
                hook(state)
    collect_reports(pending, totals, monitor, faults, "worker_restarts", pids, timeout=None)
    checkpoint()
    final = monitor.log(counters(), dict(faults))
    evaluation = ray.get(evaluator.evaluate.remote(numpy_params(arch.params(store.pull()[0])), totals.get("updates", 0))) \
        if cfg.eval_episodes else None
    for handle in [*workers, *(shards or []), *([evaluator] if evaluator else [])]:
        ray.kill(handle)
    return {"frames": int(final["frames"]), "updates": int(totals.get("updates", 0)), "evaluation": evaluation,
            "resumed_from": data["path"] if data else None, "faults": dict(faults), "evaluations": evaluations}
