"""The processes Ray starts for Ape-X (and Ape-X DPG), and the shard and evaluator hosts the other
drivers share: each wraps a plain component of distrl.components, distrl.params or distrl.replay."""

from __future__ import annotations

import copy
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.exceptions import RayActorError

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.checkpoint import replay_path, replay_set, state_digest
from distrl.components.prefetcher import Prefetcher
from distrl.params.param_server import ParamShard
from distrl.replay import MinSize, PrioritizedSampler, ReplayTable, pack
from distrl.replay.sharded import ShardedReplay
from distrl.replay.table import frame_fields
from distrl.runtime.ray.cluster import call
from distrl.runtime.ray.reports import Deltas


def prioritized_replay(cfg: C.ApexConfig, shards: list) -> ShardedReplay:
    return ShardedReplay(shards, PrioritizedSampler(cfg.replay.alpha, cfg.replay.beta), seed=cfg.seed,
                         call=call, gather=ray.get, limiter=MinSize(cfg.replay.min_size))


class BoundedSink:
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


class LearnerParams:
    """Actor-side parameter source: asks the learner for the object-store ref of its latest params."""

    def __init__(self, learner: Any):
        self.learner = learner
        self.version = -1

    def latest(self) -> tuple[dict[str, torch.Tensor], int] | None:
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


class ActorHost:
    """An Ape-X actor in its own process. Reports progress as deltas per call, so frames from a
    call that completed are counted even if the process dies later."""

    def __init__(self, cfg_dict: dict, index: int, shards: list, learner: Any):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.arch = make_architecture(cfg)  # Ape-X or Ape-X DPG
        sink = BoundedSink(prioritized_replay(cfg, shards), cfg.ray.max_inflight_adds,
                            frame_fields(cfg.replay.compress, self.arch.obs_shape))
        self.actor = self.arch.make_actor(index, sink=sink, source=LearnerParams(learner))
        self._deltas = Deltas(self.actor.counters())

    def run(self, steps: int) -> dict:
        self.actor.run(steps)
        return {"counters": self._deltas(self.actor.counters()), "returns": self.actor.drain_returns(),
                "watched_returns": self.actor.drain_watched_returns(), "pid": os.getpid()}

    def pid(self) -> int:
        return os.getpid()


class LearnerHost:
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
        self.replay = prioritized_replay(cfg, shards)
        # A restarted learner (or --resume) continues from the newest checkpoint of this run.
        data = self.arch.restore(self.run_dir, required=False)
        if data:
            self.arch.load_learner(self.learner, data)
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
        params = {k: v.numpy() for k, v in self.learner.latest()[0].items()}
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
            return str(self.arch.save_learner(self.run_dir, self.learner, self.progress, self.returns))

    def stop(self) -> None:
        self._stop.set()

    def pid(self) -> int:
        return os.getpid()

    def _wait_for_replay(self) -> None:
        """Pause until the limiter lets the learner sample again (the start, or a restarted replay)."""
        self.waiting_for_replay = True
        while not self._stop.is_set():
            try:
                if self.replay.can_sample(self.cfg.learner.batch_size):
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


class ShardHost(ParamShard):
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
            self.load_state_dict(data["roles"]["ps"][index])
        self.restored_digest = state_digest(self.state_dict()) if data else None

    def restored(self) -> dict:
        """The checkpoint this incarnation loaded its slice from, and a digest of its state then."""
        return {"path": self.restored_from, "digest": self.restored_digest, "pid": os.getpid()}


class EvaluatorHost:
    def __init__(self, cfg_dict: dict):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.evaluator = make_architecture(cfg).make_evaluator()

    def evaluate(self, params: dict[str, np.ndarray], updates: int) -> dict:
        return {**self.evaluator.evaluate({k: torch.from_numpy(v) for k, v in params.items()}),
                "updates": updates}
