"""The ray runtime: each component is a Ray actor; Ray starts, places and restarts them.

With no address, `ray.init()` starts a local instance without the dashboard (the embedded default),
its ports guarded by a per-run token (runtime/__init__.py says why not loopback); with `address`
(or RAY_ADDRESS) the same run joins a cluster. Components are the
plain classes of distrl.components; this module only wraps them and moves data between them:
experience goes actor -> replay shards in batches, parameters go learner -> object store -> actors
(one put, many gets), priorities go learner -> replay without waiting.

Faults: actors, replay shards and the learner are restarted by Ray (max_restarts=-1). A dead actor
loses only its unsent transitions; a restarted replay shard comes back empty and the learner pauses
until the table holds `replay.min_size` again; a restarted learner resumes from its latest checkpoint."""

from __future__ import annotations

import copy
import logging
import os
import queue
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.exceptions import GetTimeoutError, RayActorError

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.architectures.apex import Apex
from distrl.checkpoint import replay_path, replay_set, state_digest
from distrl.components.monitor import Monitor
from distrl.components.param_server import ParamShard
from distrl.components.prefetcher import Prefetcher
from distrl.errors import ConfigError
from distrl.replay import PrioritizedSampler, ReplayTable, pack
from distrl.replay.table import frame_fields
from distrl.replay.sharded import ShardedReplay

_RESTART = {"max_restarts": -1, "max_task_retries": 0}
# Ray hands out read-only zero-copy arrays; distrl only reads them (load_state_dict and the loss copy).
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")


def connect(address: str, num_cpus: int) -> bool:
    """Join `address` (or RAY_ADDRESS), or start a local Ray. True if we started it."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS", "")
    common = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": True}
    on_sigterm = signal.getsignal(signal.SIGTERM)
    if address:
        _check_reachable(address)
        try:
            ray.init(address=address, **common)
        except Exception as exc:  # ConnectionError, TimeoutError, ValueError, RuntimeError by version
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"cannot join the Ray cluster at {address!r} ({first[:160]}): check the address "
                              "that `ray start --head` printed, or drop --address to run on this machine") from None
    else:
        ray.init(num_cpus=max(os.cpu_count() or 1, num_cpus), **common)
    # Ray's core worker installs a SIGTERM handler that ends the process on the spot; keep the CLI's,
    # which stops the run as Ctrl-C does (a checkpoint where it stopped).
    if on_sigterm is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    return True


def _check_reachable(address: str) -> None:
    """Fail fast on a host:port nobody listens on; ray.init itself retries for minutes."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local" and the like: leave them to Ray
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address!r} ({exc.strerror or exc}): check the "
                          "address that `ray start --head` printed, or drop --address to run on this machine") \
            from None


def _call(handle: Any, method: str, *args: Any) -> Any:
    return getattr(handle, method).remote(*args)


def _sharded(cfg: C.ApexConfig, shards: list) -> ShardedReplay:
    return ShardedReplay(shards, PrioritizedSampler(cfg.replay.alpha, cfg.replay.beta), seed=cfg.seed,
                         call=_call, gather=ray.get)


class _BoundedSink:
    """Actor-side replay client: adds go out without waiting, but at most `limit` at a time, so a
    slow replay slows the actors instead of filling the object store. Fields in `compress` are
    deflated here, in the actor, so the central replay only files bytes (bench/peers: replay_ops)."""

    def __init__(self, replay: ShardedReplay, limit: int, compress: tuple[str, ...] = ()):
        self.replay, self.limit, self.compress = replay, limit, compress
        self._inflight: list = []

    def add(self, batch: dict[str, np.ndarray], priorities: np.ndarray | None = None) -> None:
        self._inflight.append(self.replay.add(pack(batch, self.compress), priorities))
        if len(self._inflight) > self.limit:
            done, self._inflight = ray.wait(self._inflight, num_returns=len(self._inflight) - self.limit)
            for ref in done:
                try:
                    ray.get(ref)
                except RayActorError:
                    pass  # a dead shard: only this batch is lost; any other error is a bug and is raised


class _LearnerParams:
    """Actor-side parameter source: asks the learner for the object-store ref of its latest params."""

    def __init__(self, learner: Any):
        self.learner = learner
        self.version = -1

    def pull(self) -> tuple[dict[str, torch.Tensor], int] | None:
        """None when nothing is new: the version is asked first, the 6.7 MB (Atari) only then."""
        try:
            ref, version = ray.get(self.learner.params.remote())
            if version == self.version:
                return None
            params = {k: torch.from_numpy(v) for k, v in ray.get(ref[0]).items()}
        except RayActorError:
            return None  # the learner is restarting: keep acting with the current parameters
        self.version = version
        return params, version


class _Deltas:
    """Workers report their counters as deltas per call, so what a completed call did is counted
    even if the process dies later (its restarted incarnation starts from zero)."""

    def __init__(self, start: dict[str, float]):
        self._last = dict(start)

    def __call__(self, now: dict[str, float]) -> dict[str, float]:
        delta = {k: now[k] - self._last[k] for k in now}
        self._last = dict(now)
        return delta


def _add_report(ref: Any, totals: dict, monitor: Monitor) -> dict | None:
    """Add a finished worker call's counter deltas and episode returns; None if its process died
    (Ray restarts it, and the caller counts the restart)."""
    try:
        out = ray.get(ref)
    except RayActorError:
        return None
    for k, v in out["counters"].items():
        totals[k] = totals.get(k, 0) + v
    monitor.add_returns(out["returns"])
    monitor.add_watched_returns(out.get("watched_returns", []))
    return out


_DEAD = -1


def _count_restart(pids: dict, i: int, pid: int | None, faults: dict, key: str) -> None:
    """Count worker i's deaths (Ray restarts each): a failed call (pid None) or a report from a new
    process. Counted once per death: one death can fail two calls (the running one and one sent
    before Ray noticed), and a worker killed between calls fails none."""
    last = pids.get(i)
    if (pid is None and last != _DEAD) or (pid is not None and last not in (None, _DEAD, pid)):
        faults[key] += 1
    pids[i] = _DEAD if pid is None else pid


def _sync_restarts(faults: dict, key: str, handles: list) -> None:
    """Set faults[key] to the restarts Ray's actor table records for `handles`: exact even when a
    restarted worker dies again before it reports. Ray keeps that table behind a private API, so
    where it is missing or moved the count from failed calls (_count_restart) stands."""
    try:
        from ray._private import state
        faults[key] = sum(int(state.actors(h._actor_id.hex())["NumRestarts"]) for h in handles)
    except Exception:  # noqa: BLE001 - any failure of a private API means: keep our own count
        pass


def _collect(pending: dict, totals: dict, monitor: Monitor, faults: dict, key: str, pids: dict,
             timeout: float | None = 0.5) -> list[int]:
    """Add the reports of the worker calls in `pending` (ref -> worker index) that finish within
    `timeout` (None: wait for all of them), count restarted workers under faults[key] (what a dead
    one's call was doing is lost), and return the indices of the workers now free."""
    if timeout is None:
        ready = list(pending)
    else:
        ready = ray.wait(list(pending), num_returns=1, timeout=timeout)[0] if pending else []
    free = []
    for ref in ready:
        i = pending.pop(ref)
        free.append(i)
        out = _add_report(ref, totals, monitor)
        _count_restart(pids, i, out and out["pid"], faults, key)
    return free


def _poll_eval(ref: Any, evaluations: list[dict], monitor: Monitor) -> Any:
    """Log the periodic evaluation `ref` if it finished; returns the ref still pending, else None."""
    if ref is None or not ray.wait([ref], timeout=0)[0]:
        return ref
    try:
        evaluations.append(ray.get(ref))
        monitor.log_eval(evaluations[-1])
    except RayActorError:
        pass  # the evaluator died with it; the next one is asked for later
    return None


class ReplayShard(ReplayTable):
    """A replay shard in its own process. With replay.checkpoint on, one that Ray restarts (or one
    started for --resume) reloads its slice of the newest checkpoint's replay set instead of
    starting empty, so the learner's pause is a reload, not a refill."""

    def __init__(self, capacity: int, sampler: Any, remover: Any, seed: int, compress: tuple, index: int = 0,
                 run_dir: str | None = None):
        # Copies: Ray hands the arrays inside constructor arguments over read-only, and the FIFO
        # remover writes into its preallocated queue (the first trim past capacity would fail).
        super().__init__(capacity, copy.deepcopy(sampler), copy.deepcopy(remover), seed, compress)
        self.restored_from = None
        saved = replay_set(Path(run_dir)) if run_dir else {}
        if index in saved:
            self.__dict__.update(ReplayTable.restore(saved[index]).__dict__)
            self.restored_from = str(saved[index])

    def restored(self) -> dict:
        return {"path": self.restored_from, "size": len(self), "pid": os.getpid()}


class ActorWorker:
    """An Ape-X actor in its own process. Reports progress as deltas per call, so frames from a
    call that completed are counted even if the process dies later."""

    def __init__(self, cfg_dict: dict, index: int, shards: list, learner: Any):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.arch = make_architecture(cfg)  # Ape-X or Ape-X DPG
        sink = _BoundedSink(_sharded(cfg, shards), cfg.ray.max_inflight_adds,
                            frame_fields(cfg.replay.compress, self.arch.obs_shape))
        self.actor = self.arch.make_actor(index, sink=sink, source=_LearnerParams(learner))
        self._deltas = _Deltas(self.actor.counters())

    def run(self, steps: int) -> dict:
        self.actor.run(steps)
        return {"counters": self._deltas(self.actor.counters()), "returns": self.actor.drain_returns(),
                "watched_returns": self.actor.drain_watched_returns(), "pid": os.getpid()}

    def pid(self) -> int:
        return os.getpid()


class LearnerWorker:
    """The learner in its own process: a training thread (prefetching batches from the replay
    shards) and calls served beside it (params, counters, stop), hence a threaded Ray actor."""

    def __init__(self, cfg_dict: dict, shards: list, run_dir: str, device: str):
        self.cfg = cfg = C.from_dict(cfg_dict)
        self.arch = make_architecture(cfg)  # Ape-X or Ape-X DPG
        if len(self.arch.obs_shape) == 3 and not cfg.torch_threads:
            torch.set_num_threads(os.cpu_count() or 1)  # Ray sets 1 thread per 1-CPU worker; a CNN learner wants more
        self.run_dir = Path(run_dir)
        self.learner = self.arch.make_learner(device)
        self.shards = shards
        self.replay = _sharded(cfg, shards)
        # A restarted learner (or --resume) continues from the newest checkpoint of this run.
        data = self.arch.restore(self.run_dir, self.learner, required=False)
        self.resumed_from = data["path"] if data else None
        self.restored_digest = state_digest(self.learner.state_dict()) if data else None
        self.progress = dict(data["counters"]) if data else {}
        self.returns = list(data["returns"]) if data else []
        self.replay_waits = 0
        self.waiting_for_replay = True
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._publish()

    def _publish(self) -> None:
        params = {k: v.numpy() for k, v in self.learner.pull()[0].items()}
        self._params = ([ray.put(params)], self.learner.updates)  # a list keeps Ray from resolving the ref

    def params(self) -> tuple[list, int]:
        return self._params

    def restored(self) -> dict:
        """What this incarnation loaded, with a digest of its state right after loading."""
        return {"path": self.resumed_from, "counters": self.progress, "returns": self.returns,
                "digest": self.restored_digest, "pid": os.getpid()}

    def counters(self) -> dict:
        return {**self.learner.counters(), "replay_waits": self.replay_waits,
                "waiting_for_replay": int(self.waiting_for_replay)}

    def note_progress(self, counters: dict, returns: list[float]) -> None:
        """The driver's frame counts and recent returns, saved with the next checkpoint."""
        self.progress, self.returns = dict(counters), list(returns)

    def checkpoint(self) -> str:
        with self._lock:
            if self.cfg.replay.checkpoint:  # the replay set first: a checkpoint that exists has its set
                step = self.learner.updates
                try:
                    ray.get([s.save.remote(str(replay_path(self.run_dir, step, i))) for i, s in enumerate(self.shards)])
                except RayActorError:
                    pass  # a shard is restarting: this checkpoint goes without a replay set
            return str(self.arch.save(self.run_dir, self.learner, self.progress, self.returns))

    def stop(self) -> None:
        self._stop.set()

    def pid(self) -> int:
        return os.getpid()

    def _wait_for_replay(self) -> None:
        """Pause until the table holds the minimum again (the start, or a restarted replay)."""
        self.waiting_for_replay = True
        while not self._stop.is_set():
            try:
                if len(self.replay) >= self.cfg.replay.min_size:
                    break
            except RayActorError:
                pass  # the shard is restarting
            time.sleep(0.2)
        self.waiting_for_replay = False

    def train(self) -> int:
        cfg = self.cfg
        while not self._stop.is_set():
            self._wait_for_replay()
            if self._stop.is_set():
                break
            prefetcher = Prefetcher(lambda: self.replay.sample(cfg.learner.batch_size), max(1, cfg.learner.prefetch))
            try:
                while not self._stop.is_set():
                    try:
                        sampled = prefetcher.get(timeout=1.0)
                    except queue.Empty:
                        continue  # look at the stop flag again
                    with self._lock:
                        self.arch.learner_step(self.replay, self.learner, sampled)
                    if self.learner.updates % cfg.ray.publish_every == 0:
                        self._publish()
                    if self.learner.updates % cfg.checkpoint_every == 0:
                        self.checkpoint()
            except (RayActorError, ValueError):
                # The replay died (or came back empty mid-sample): its data is gone; refill first.
                self.replay_waits += 1
            finally:
                prefetcher.close()
        self._publish()
        return self.learner.updates


def _retry(fn: Callable[[], Any], wait: Callable[[], None], timeout_s: float = 120.0) -> Any:
    """Call fn until no component it talks to is restarting (RayActorError), for up to timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except RayActorError:
            if time.monotonic() > deadline:
                raise
            wait()


def _numpy(params: dict[str, torch.Tensor]) -> dict:
    return {k: v.numpy() for k, v in params.items()}


class ShardWorker(ParamShard):
    """A parameter-server shard in its own process (Gorila, A3C's sharded store). A restarted one
    (or one started for --resume) begins from its slice of the newest checkpoint of the run."""

    def __init__(self, cfg_dict: dict, index: int, run_dir: str):
        torch.set_num_threads(1)
        arch = make_architecture(C.from_dict(cfg_dict))
        values, options = arch.shard_args(index)
        super().__init__(values, **options)
        data = arch.restore(Path(run_dir), required=False)
        self.restored_from = data["path"] if data else None
        if data:
            self.load_state_dict(data["ps"][index])
        self.restored_digest = state_digest(self.state_dict()) if data else None

    def restored(self) -> dict:
        """The checkpoint this incarnation loaded its slice from, and a digest of its state then."""
        return {"path": self.restored_from, "digest": self.restored_digest, "pid": os.getpid()}


class EvaluatorWorker:
    def __init__(self, cfg_dict: dict):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.evaluator = make_architecture(cfg).make_evaluator()

    def evaluate(self, params: dict[str, np.ndarray], updates: int) -> dict:
        return {**self.evaluator.evaluate({k: torch.from_numpy(v) for k, v in params.items()}),
                "updates": updates}


def _learner_resources(cfg: C.ApexConfig) -> tuple[float, str]:
    gpus = cfg.ray.learner_gpus
    if gpus < 0:
        gpus = 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0
    return gpus, "cuda" if gpus > 0 else "cpu"


def run_apex(arch: Apex, run_dir: Path, monitor: Monitor, resume: bool = False,
             hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Drive a run: keep every actor busy, count what they report, log, evaluate, stop at max_frames.

    `hook(state)` is called on every driver tick with the live handles (fault-injection tests use it)."""
    cfg = arch.cfg
    started = connect(cfg.address, cfg.actors + cfg.replay.shards + 2)  # + learner, evaluator
    cfg_dict = C.to_dict(cfg)
    try:
        return _drive(arch, cfg, cfg_dict, Path(run_dir), monitor, hook)
    finally:
        if started:
            ray.shutdown()


def _actor_placement(node_ip: str) -> dict:
    """Soft node affinity: the actors start on the node at `node_ip`, and Ray restarts them on another
    node once that one is gone (the placement a cluster of CPU actor hosts wants)."""
    if not node_ip:
        return {}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    alive = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    if node_ip not in alive:
        raise ConfigError(f"ray.actor_node={node_ip!r}: no live node of this Ray cluster has that address "
                          f"(its nodes: {', '.join(sorted(alive))}); give one of those, or leave it empty")
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(alive[node_ip], soft=True)}


def _drive(arch: Apex, cfg: C.ApexConfig, cfg_dict: dict, run_dir: Path, monitor: Monitor,
           hook: Callable[[dict], None] | None) -> dict[str, Any]:
    placement = _actor_placement(cfg.ray.actor_node)  # before anything starts: a wrong address fails first
    r = cfg.replay
    compress = frame_fields(r.compress, arch.obs_shape)
    per_shard = -(-r.capacity // r.shards)
    shard_cls = ray.remote(ReplayShard).options(num_cpus=1, **_RESTART)
    saved = str(run_dir.resolve()) if r.checkpoint else None
    shards = [shard_cls.remote(per_shard, PrioritizedSampler(r.alpha, r.beta), arch.replay_remover(), cfg.seed + i,
                               compress, i, saved) for i in range(r.shards)]
    gpus, device = _learner_resources(cfg)
    learner = ray.remote(LearnerWorker).options(num_cpus=1, num_gpus=gpus, max_concurrency=4, **_RESTART) \
        .remote(cfg_dict, shards, str(run_dir.resolve()), device)
    restored = ray.get(learner.restored.remote())
    base = {k: int(v) for k, v in restored["counters"].items()}
    monitor.add_returns(restored["returns"])
    if arch.watched_return:
        monitor.watch(arch.watched_return)
    actor_cls = ray.remote(ActorWorker).options(num_cpus=1, **_RESTART, **placement)
    actors = [actor_cls.remote(cfg_dict, i, shards, learner) for i in range(cfg.actors)]
    evaluator = ray.remote(EvaluatorWorker).options(num_cpus=1, **_RESTART).remote(cfg_dict) \
        if cfg.eval_every or cfg.eval_episodes else None
    replay = _sharded(cfg, shards)

    totals = {"frames": base.get("frames", 0), "episodes": base.get("episodes", 0),
              "param_pulls": base.get("param_pulls", 0), "steps": 0, "transitions_sent": 0}
    faults = {"actor_restarts": 0, "learner_restarts": 0}
    pids: dict[int, int] = {}
    waits = {"base": 0, "last": 0}  # the learner's replay_waits, summed over its incarnations
    training, probe, learner_pid = learner.train.remote(), None, {}
    pending = {actors[i].run.remote(cfg.ray.steps_per_call): i for i in range(cfg.actors)}
    evaluations: list[dict] = []
    eval_ref, next_eval = None, cfg.eval_every
    last_counters: dict[str, float] = {}
    last_log = time.perf_counter()
    state = {"actors": actors, "replay": shards, "learner": learner, "evaluator": evaluator,
             "totals": totals, "faults": faults, "run_dir": run_dir}

    def counters() -> dict[str, float]:
        _sync_restarts(faults, "actor_restarts", actors)
        _sync_restarts(faults, "learner_restarts", [learner])
        c = {f"actors/{k}": v for k, v in totals.items()}
        try:
            c.update({f"replay/{k}": v for k, v in replay.stats().items()})
            c.update({f"learner/{k}": v for k, v in ray.get(learner.counters.remote(), timeout=30).items()})
        except (RayActorError, GetTimeoutError):
            c.update({k: v for k, v in last_counters.items() if not k.startswith("actors/")})
        c.update({f"faults/{k}": v for k, v in faults.items()})
        return c

    parked: list[int] = []
    spi = cfg.ray.samples_per_insert

    def may_act() -> bool:
        """Rate limit (Reverb's SampleToInsertRatio, simplified): inserts may lead learner samples / spi
        by one round of calls once learning has started."""
        if spi <= 0 or totals["transitions_sent"] < cfg.replay.min_size:
            return True
        try:
            learner_now = ray.get(learner.counters.remote(), timeout=30)
        except (RayActorError, GetTimeoutError):
            return True
        if learner_now["waiting_for_replay"]:
            return True  # a restarted replay must refill before the learner samples again
        samples = learner_now["samples"]
        slack = cfg.actors * cfg.ray.steps_per_call * cfg.actor.envs_per_actor
        return totals["transitions_sent"] <= cfg.replay.min_size + samples / spi + slack

    def note_progress() -> Any:
        """The driver's frame counts and recent returns, for the learner to save with its next checkpoint."""
        return learner.note_progress.remote({k: totals[k] for k in ("frames", "episodes", "param_pulls")},
                                            list(monitor.returns))

    def gauges(c: dict[str, float]) -> dict[str, float]:
        now = int(c.get("learner/replay_waits", 0))
        if now < waits["last"]:  # a restarted learner counts from zero again
            waits["base"] += waits["last"]
        waits["last"] = now
        return {"replay_size": c.get("replay/size", 0), "actor_restarts": faults["actor_restarts"],
                "learner_restarts": faults["learner_restarts"], "replay_waits": waits["base"] + now}

    monitor.start(counters())
    try:
        while totals["frames"] < cfg.max_frames:
            # a dead actor's unsent data is lost
            parked += _collect(pending, totals, monitor, faults, "actor_restarts", pids)
            while parked and may_act():
                i = parked.pop(0)
                pending[actors[i].run.remote(cfg.ray.steps_per_call)] = i
            if parked and not pending:
                time.sleep(0.005)
            if training is not None and ray.wait([training], timeout=0)[0]:
                try:
                    ray.get(training)
                except RayActorError:  # Ray restarts it from its newest checkpoint: one death, counted once
                    _count_restart(learner_pid, 0, None, faults, "learner_restarts")
                training, probe = None, learner.pid.remote()  # training is asked for again once it answers
            if probe is not None and ray.wait([probe], timeout=0)[0]:
                try:
                    _count_restart(learner_pid, 0, ray.get(probe), faults, "learner_restarts")
                    training, probe = learner.train.remote(), None
                except RayActorError:
                    probe = learner.pid.remote()  # still restarting
            eval_ref = _poll_eval(eval_ref, evaluations, monitor)
            if time.perf_counter() - last_log >= cfg.log_every_s:
                last_log = time.perf_counter()
                last_counters = counters()
                monitor.log(last_counters, gauges(last_counters))
                note_progress()
                if cfg.eval_every and eval_ref is None and last_counters.get("learner/updates", 0) >= next_eval:
                    params_ref, version = ray.get(learner.params.remote())
                    eval_ref = evaluator.evaluate.remote(params_ref[0], version)
                    next_eval = version + cfg.eval_every
            if hook is not None:
                hook(state)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: save where the run stopped, for --resume
        try:
            ray.get(note_progress(), timeout=30)
            print(f"distrl: saved {ray.get(learner.checkpoint.remote(), timeout=120)}", file=sys.stderr)
        except (RayActorError, GetTimeoutError):
            pass  # the learner is restarting: its newest periodic checkpoint stands
        raise

    def wait() -> None:
        time.sleep(0.2)

    _retry(lambda: ray.get(learner.stop.remote()), wait)
    updates = ray.get(training) if training is not None else \
        _retry(lambda: ray.get(learner.counters.remote())["updates"], wait)
    ray.get(note_progress())
    ray.get(learner.checkpoint.remote())
    last_counters = counters()
    final = monitor.log(last_counters, gauges(last_counters))
    faults["replay_waits"] = int(final["replay_waits"])
    evaluation = None
    if cfg.eval_episodes:
        params_ref, version = ray.get(learner.params.remote())
        evaluation = ray.get(evaluator.evaluate.remote(params_ref[0], version))
    for handle in [*actors, learner, *shards, *([evaluator] if evaluator else [])]:
        ray.kill(handle)
    return {"frames": int(final["frames"]), "updates": int(updates), "evaluation": evaluation,
            "resumed_from": restored["path"], "replay_size": int(final["replay_size"]),
            "faults": dict(faults), "evaluations": evaluations}


def run_gorila(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Gorila's driver lives in ray_gorila.py (imported here lazily: it builds on this module)."""
    from distrl.runtime.ray_gorila import run_gorila as run
    return run(*args, **kwargs)


def run_a3c(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """A3C's driver lives in ray_a3c.py (imported here lazily: it builds on this module)."""
    from distrl.runtime.ray_a3c import run_a3c as run
    return run(*args, **kwargs)


def run_ba3c(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """BA3C's driver lives in ray_ba3c.py (imported here lazily: it builds on this module)."""
    from distrl.runtime.ray_ba3c import run_ba3c as run
    return run(*args, **kwargs)


run_apex_dpg = run_apex  # the same driver: only the parts differ (architectures/apex_dpg.py)
