"""Gorila on Ray: one actor per parameter-server shard, one per bundle (actor + replay + learner in
one process), and with `replay.mode=global` one shared replay table.

Faults: Ray restarts every one of them (max_restarts=-1). A dead bundle loses its local replay and
unsent transitions; the others go on. A restarted shard loads its slice of the newest checkpoint
(values, optimizer state, version) and training goes on; bundles that called it meanwhile skip
that round. The driver checkpoints every shard each `checkpoint_every` global updates."""

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
from distrl.architectures.gorila import Gorila, gorila_counters, gorila_gauges
from distrl.components.monitor import Monitor
from distrl.components.workers import BoundedSink, Deltas, ReplayShard
from distrl.params.param_server import ShardedParameterServer
from distrl.replay import UniformSampler
from distrl.replay.sharded import ShardedReplay
from distrl.replay.table import frame_fields
from distrl.runtime.ray.cluster import RESTART, call, connect, numpy_params, retry
from distrl.runtime.ray.hosts import EvaluatorHost, ShardHost
from distrl.runtime.ray.placement import RayTransport
from distrl.runtime.ray.reports import add_report, count_restart, poll_eval, saved_on_interrupt, sync_restarts

_ACTOR_KEYS = ("frames", "episodes", "param_pulls")


class BundleHost:
    """One bundle in its own process; reports progress as deltas per call (as Ape-X actors do)."""

    def __init__(self, cfg_dict: dict, index: int, shards: list, global_replay: Any):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(cfg.torch_threads or 1)
        arch = Gorila(cfg)
        ps = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
        if global_replay is None:
            self.local_replay = replay = arch.make_replay(index)
            sink = None
        else:
            self.local_replay = None
            replay = ShardedReplay([global_replay], UniformSampler(), seed=cfg.seed + index, call=call, gather=ray.get,
                                   limiter=arch.replay_limiter())
            sink = BoundedSink(replay, RayTransport, 8, frame_fields(cfg.replay.compress, arch.obs_shape))
        self.ps_waits = 0
        self.bundle = retry(lambda: arch.make_bundle(index, ps, replay, sink), self._waited)
        self._deltas = Deltas(self.bundle.counters())

    def _waited(self) -> None:
        self.ps_waits += 1
        time.sleep(0.2)

    def run(self, rounds: int) -> dict:
        """`rounds` bundle rounds; a shard or the shared table restarting ends the call early."""
        for _ in range(rounds):
            try:
                self.bundle.run_round()
            except RayActorError:
                self._waited()
                break
        return {"counters": self._deltas(self.bundle.counters()), "returns": self.bundle.actor.drain_returns(), "ps_waits": self.ps_waits,
                "pid": os.getpid(),
                "replay": self.local_replay.stats() if self.local_replay is not None else None}

    def pid(self) -> int:
        return os.getpid()


def run_gorila(arch: Gorila, run_dir: Path, monitor: Monitor, resume: bool = False,
               hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Drive a run: keep every bundle busy, count what they report, checkpoint the shards, log,
    evaluate, stop at max_frames. `hook(state)` runs on every driver tick (fault-injection tests)."""
    cfg = arch.cfg
    started = connect(cfg.address, cfg.actors + cfg.ps.shards + 3)
    try:
        return _drive(arch, cfg, Path(run_dir), monitor, resume, hook)
    finally:
        if started:
            ray.shutdown()


def _drive(arch: Gorila, cfg: C.GorilaConfig, run_dir: Path, monitor: Monitor, resume: bool,
           hook: Callable[[dict], None] | None) -> dict[str, Any]:
    cfg_dict = C.to_dict(cfg)
    restored = arch.restore(run_dir, required=resume)  # a bad checkpoint fails here, before any process starts
    run_path = str(run_dir.resolve())
    shard_cls = ray.remote(ShardHost).options(num_cpus=1, **RESTART)
    shards = [shard_cls.remote(cfg_dict, i, run_path) for i in range(cfg.ps.shards)]
    ps = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
    global_replay = None
    if cfg.replay.mode == "global":
        global_replay = ray.remote(ReplayShard).options(num_cpus=1, **RESTART).remote(arch, 0)
    bundle_cls = ray.remote(BundleHost).options(num_cpus=1, **RESTART)
    bundles = [bundle_cls.remote(cfg_dict, i, shards, global_replay) for i in range(cfg.actors)]
    evaluator = ray.remote(EvaluatorHost).options(num_cpus=1, **RESTART).remote(cfg_dict) \
        if cfg.eval_episodes else None

    totals: dict[str, int] = {k: int(v) for k, v in (restored["counters"] if restored else {}).items()}
    if restored:
        monitor.add_returns(list(restored["returns"]))
    faults = {"bundle_restarts": 0, "ps_restarts": 0, "ps_waits": 0}
    pids: dict[int, int] = {}
    bundle_replays: dict[int, dict] = {}
    ps_waits: dict[int, int] = {}
    shard_pids = ray.get([s.pid.remote() for s in shards])
    last_counters: dict[str, float] = {}
    state = {"bundles": bundles, "ps": shards, "replay": [global_replay] if global_replay else [],
             "evaluator": evaluator, "totals": totals, "faults": faults, "run_dir": run_dir}

    def replay_stats() -> list[dict]:
        if global_replay is not None:
            return [ray.get(global_replay.stats.remote(), timeout=30)]
        return list(bundle_replays.values())

    def counters() -> dict[str, float]:
        sync_restarts(faults, "bundle_restarts", bundles)
        sync_restarts(faults, "ps_restarts", shards)
        try:
            c = gorila_counters(totals, ps.counters(), replay_stats())
        except (RayActorError, GetTimeoutError):
            c = {**last_counters, **{f"actors/{k}": totals.get(k, 0) for k in _ACTOR_KEYS}}
        return {**c, **{f"faults/{k}": v for k, v in faults.items()}}

    def check_shards() -> None:
        """A shard whose process changed was restarted by Ray (from the latest checkpoint)."""
        for i, shard in enumerate(shards):
            try:
                pid = ray.get(shard.pid.remote(), timeout=30)
            except (RayActorError, GetTimeoutError):
                continue
            if pid != shard_pids[i]:
                shard_pids[i] = pid
                faults["ps_restarts"] += 1

    def checkpoint() -> Path:
        return arch.save_shards(run_dir, ps.state_dict(), totals, list(monitor.returns))

    def collect(ref: Any, i: int) -> None:
        out = add_report(ref, totals, monitor)
        count_restart(pids, i, out and out["pid"], faults, "bundle_restarts")
        if out is None:
            return  # Ray restarts it; its replay and unsent transitions are lost
        ps_waits[i] = out["ps_waits"]
        faults["ps_waits"] = sum(ps_waits.values())
        if out["replay"] is not None:
            bundle_replays[i] = out["replay"]

    monitor.start(counters())
    calls = cfg.bundle.rounds_per_call
    pending = {bundles[i].run.remote(calls): i for i in range(cfg.actors)}
    evaluations: list[dict] = []
    eval_ref, next_eval = None, cfg.eval_every
    next_checkpoint = (restored and min(int(s["version"]) for s in restored["roles"]["ps"]) or 0) + cfg.checkpoint_every
    last_log = time.perf_counter()
    with saved_on_interrupt(checkpoint):
        while totals.get("frames", 0) < cfg.max_frames:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                i = pending.pop(ref)
                collect(ref, i)
                pending[bundles[i].run.remote(calls)] = i
            eval_ref = poll_eval(eval_ref, evaluations, monitor)
            if time.perf_counter() - last_log >= cfg.log_every_s:
                last_log = time.perf_counter()
                check_shards()
                last_counters = counters()
                monitor.log(last_counters, {**gorila_gauges(last_counters), **faults})
                updates = int(last_counters.get("learner/updates", 0))
                try:
                    if updates >= next_checkpoint:
                        checkpoint()
                        next_checkpoint = updates + cfg.checkpoint_every
                    if cfg.eval_every and cfg.eval_episodes and eval_ref is None and updates >= next_eval:
                        flat, versions = ps.pull()
                        eval_ref = evaluator.evaluate.remote(numpy_params(arch.params(flat)), int(versions.min()))
                        next_eval = updates + cfg.eval_every
                except RayActorError:
                    pass  # a shard is restarting: try again at the next tick
            if hook is not None:
                hook(state)

    for ref, i in pending.items():
        collect(ref, i)
    checkpoint()
    check_shards()
    last_counters = counters()
    final = monitor.log(last_counters, {**gorila_gauges(last_counters), **faults})
    flat, versions = ps.pull()
    evaluation = ray.get(evaluator.evaluate.remote(numpy_params(arch.params(flat)), int(versions.min()))) \
        if cfg.eval_episodes else None
    for handle in [*bundles, *shards, *([global_replay] if global_replay else []), *([evaluator] if evaluator else [])]:
        ray.kill(handle)
    return {"frames": int(final["frames"]), "updates": int(versions.min()), "evaluation": evaluation,
            "resumed_from": restored["path"] if restored else None, "replay_size": int(final["replay_size"]),
            "faults": {**faults, "dropped_stale": int(final["dropped_stale"]),
                       "dropped_outliers": int(final["dropped_outliers"])},
            "evaluations": evaluations}
