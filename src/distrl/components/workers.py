"""Components as roles of a run: each takes (parts, index, links, transport), so one class runs in
this process (inline) or in its own (Ray) unchanged, and a called role answers `run(n) -> Report`.

`parts` is the wiring, seen through the one Protocol of distrl.contracts that names what the role
builds itself from. `links` maps a role's name to the instances (or remote handles) of the roles it
talks to; the transport is the only way it reaches them, and the only thing that says what differs
where it runs apart from them (contracts.Transport)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from distrl.checkpoint import replay_path, replay_set, state_digest
from distrl.components.staging import DeviceStager
from distrl.contracts import (
    ActorLearnerParts,
    ActorParts,
    BundleParts,
    Checkpoints,
    EvaluatorParts,
    GradientParts,
    LearnerParts,
    Prefetch,
    ReplayParts,
    Report,
    ShardParts,
    Transport,
)
from distrl.params.param_server import ParamShard
from distrl.replay import ReplayTable
from distrl.transport import retry


class Deltas:
    """Counters as deltas per call, from the values an incarnation started with."""

    def __init__(self, start: dict[str, float]):
        self._last = dict(start)

    def __call__(self, now: dict[str, float]) -> dict[str, float]:
        delta = {k: now[k] - self._last.get(k, 0) for k in now}
        self._last = dict(now)
        return delta


class RestoresItself:
    """A stateful role started again (a restart, or --resume) begins from its part of the run's newest
    checkpoint: `load(data)` takes it from the checkpoint, and a digest of `state()` right after is what
    a fault test compares with the file (`restored()`)."""

    restored_from: str | None = None
    restored_digest: str | None = None

    def restore_newest(self, parts: Checkpoints, load: Callable[[dict], None],
                       state: Callable[[], dict]) -> None:
        run_dir = parts.cfg.run_dir
        data = parts.restore(Path(run_dir), required=False) if run_dir else None
        if data:
            load(data)
            self.restored_from, self.restored_digest = data["path"], state_digest(state())

    def restored(self) -> dict:
        """The checkpoint this incarnation loaded, with a digest of its state right after loading."""
        return {"path": self.restored_from, "digest": self.restored_digest, "pid": os.getpid()}


class ReplayShard(ReplayTable):
    """One replay table of a run. With replay.checkpoint on, one started again (a restart, or --resume)
    reloads its slice of the newest checkpoint's replay set instead of starting empty."""

    def __init__(self, wiring: ReplayParts, index: int = 0, links: dict | None = None, transport: Any = None):
        super().__init__(*wiring.replay_args(index))
        self.restored_from = None
        cfg = wiring.cfg
        saved = replay_set(Path(cfg.run_dir)) if getattr(cfg.replay, "checkpoint", False) and cfg.run_dir else {}
        if index in saved:
            self.__dict__.update(ReplayTable.restore(saved[index]).__dict__)
            self.restored_from = str(saved[index])

    def restored(self) -> dict:
        return {"path": self.restored_from, "size": len(self), "pid": os.getpid()}


class LearnerSource:
    """Actor-side parameter source: the learner's latest published parameters, fetched only when their
    version is new (the version is asked first, the 6.7 MB of an Atari net only then)."""

    def __init__(self, learner: Any, transport: Transport):
        self.learner, self.transport = learner, transport
        self.version = -1

    def latest(self) -> tuple[dict[str, torch.Tensor], int] | None:
        t = self.transport
        try:
            payload, version = t.gather([t.call(self.learner, "params")])[0]
            if version == self.version:
                return None
            params = t.gather(payload)[0]
        except t.dead:
            return None  # the learner is restarting: keep acting with the current parameters
        self.version = version
        return {k: torch.as_tensor(v) for k, v in params.items()}, version


class ActorWorker:
    """An actor of a replay-fed wiring (Ape-X, Ape-X DPG): `run(steps)` steps every env `steps` times."""

    def __init__(self, wiring: ActorParts, index: int, links: dict[str, list], transport: Transport):
        replay = wiring.replay_client(links["replay"], transport)
        sink = transport.sink(replay, wiring.cfg.ray.max_inflight_adds, wiring.compressed(), wiring.codec(),
                              wiring.shared_frames())
        self.actor = wiring.make_actor(index, sink=sink, source=LearnerSource(links["learner"][0], transport))
        if wiring.cfg.ray.actor_gpus > 0:  # Ray granted this process its share of a GPU
            self.actor.place(transport.device())
        self._deltas = Deltas(self.actor.counters())

    def run(self, steps: int) -> Report:
        self.actor.run(steps)
        return Report(self._deltas(self.actor.counters()), self.actor.drain_returns(),
                      self.actor.drain_watched_returns())

    def finish(self) -> None:
        """What the envs hold in the n-step adders goes to the replay; the envs close."""
        self.actor.flush()
        self.actor.close()

    def pid(self) -> int:
        return os.getpid()


class LearnerWorker(RestoresItself):
    """The learner of a replay-fed wiring: `run(n)` makes up to n updates (as many as fit in the transport's
    call budget), sampling as the transport does (ahead, on threads, where the replay is remote), and
    pausing while the replay cannot sample (the start, or a restarted shard refilling). It restores
    itself from the run's newest checkpoint when one exists, and saves itself (and, with
    replay.checkpoint, the replay shards first) when asked."""

    def __init__(self, wiring: LearnerParts, index: int, links: dict[str, list], transport: Transport):
        self.wiring, self.transport, self.cfg = wiring, transport, wiring.cfg
        self.run_dir = Path(self.cfg.run_dir)
        self.learner = wiring.make_learner(transport.device())
        self.shards = links["replay"]
        self.replay = wiring.replay_client(self.shards, transport)
        self.restore_newest(wiring, lambda data: wiring.load_learner(self.learner, data),
                            lambda: self.learner.state_dict())
        self.replay_waits = 0
        self.skipped_updates = 0  # asked for while the replay could not sample: not made up later
        self.waiting = True
        self._prefetcher: Prefetch | None = None
        self.stager = DeviceStager(self.learner.device, wiring.image_fields())
        self._lock = threading.Lock()
        self._deltas = Deltas(self.counters())
        self.published = transport.publisher(self.learner.latest, self.cfg.ray.publish_every)

    @property
    def updates(self) -> int:
        return self.learner.updates

    def latest(self) -> tuple[dict[str, torch.Tensor], int]:
        return self.learner.latest()

    def params(self) -> tuple[list, int]:
        """([parameters], version), as the transport publishes them (where actors run apart: every
        ray.publish_every updates)."""
        return self.published.get()

    def counters(self) -> dict[str, float]:
        return {**self.learner.counters(), "replay_waits": self.replay_waits, "skipped_updates": self.skipped_updates}

    def run(self, n: int) -> Report:
        with self._lock:
            self._train(int(n))
        return Report(self._deltas(self.counters()), state={"waiting_for_replay": int(self.waiting)})

    def _train(self, n: int) -> None:
        cfg, t = self.cfg, self.transport
        if self.waiting:
            try:
                ready = self.replay.can_sample(cfg.learner.batch_size)
            except t.lost:
                ready = False  # a shard is restarting
            if not ready:
                self.skipped_updates += n
                t.idle(0.2)
                return
            self.waiting = False
        deadline = time.monotonic() + t.call_budget_s  # in one process an infinite budget: exactly n
        try:
            for _ in range(n):
                self.wiring.learner_step(self.replay, self.learner, self._sample())
                self.published.tick(self.learner.updates)
                if time.monotonic() >= deadline:
                    break
        except t.lost:
            self.replay_waits += 1  # the replay's data is gone: wait for it to refill
            self.waiting = True
            self._stop_prefetching()

    def _sample(self) -> Any:
        if self._prefetcher is None:
            le = self.cfg.learner
            self._prefetcher = self.transport.prefetch(lambda: self.stager.sample(self.replay, le.batch_size), le.prefetch,
                                                       le.prefetch_threads)
        return self._prefetcher.get()

    def _stop_prefetching(self) -> None:
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None

    def checkpoint(self, counters: dict[str, float], returns: list[float]) -> str:
        """Save the learner (and first the replay set, with replay.checkpoint) under its update count."""
        with self._lock:
            self.published.publish()
            t = self.transport
            if getattr(self.cfg.replay, "checkpoint", False):  # the replay set first: a checkpoint that exists has its set
                try:
                    self.replay.flush_priorities()
                    t.gather([t.call(s, "save", str(replay_path(self.run_dir, self.learner.updates, i)))
                              for i, s in enumerate(self.shards)])
                except t.dead:
                    pass  # a shard is restarting: this checkpoint goes without a replay set
            return str(self.wiring.save_learner(self.run_dir, self.learner, counters, returns))

    def finish(self) -> None:
        self._stop_prefetching()

    def pid(self) -> int:
        return os.getpid()


class WaitsForShards:
    """A role that reaches parameter shards (or BA3C's chief) through `self.transport`: a call that
    finds one restarting waits a little, counted in `self.ps_waits`."""

    transport: Any
    ps_waits: int

    def _waited(self) -> None:
        self.ps_waits += 1
        self.transport.idle(0.2)


class ShardWorker(ParamShard, RestoresItself):
    """A parameter-server shard of a run (Gorila; A3C's sharded store). One started again (a restart,
    or --resume) begins from its slice of the run's newest checkpoint."""

    def __init__(self, wiring: ShardParts, index: int, links: dict | None = None, transport: Any = None):
        values, options = wiring.shard_args(index)
        super().__init__(values, **options)
        self.restore_newest(wiring, lambda data: self.load_state_dict(data["roles"]["ps"][index]), self.state_dict)

    def stats(self) -> dict[str, int]:
        return self.counters()

    def pid(self) -> int:
        return os.getpid()


class BundleWorker(WaitsForShards):
    """A Gorila bundle (actor, replay, learner in one process): `run(rounds)` makes that many bundle rounds.
    The replay is the bundle's own table, or the shared one linked as "replay" (replay.mode=global). A
    parameter shard or the shared table restarting ends a call early; the bundle waits and goes on."""

    def __init__(self, wiring: BundleParts, index: int, links: dict[str, list], transport: Transport):
        self.transport, self.ps_waits = transport, 0
        ps = wiring.shard_client(links["ps"], transport)
        self.local_replay, sink = None, None
        if links.get("replay"):
            replay = wiring.shared_replay_client(links["replay"], transport, index)
            sink = transport.sink(replay, 8, wiring.compressed(), wiring.codec())
        else:
            replay = self.local_replay = wiring.make_replay(index)
        self.bundle = retry(lambda: wiring.make_bundle(index, ps, replay, sink), transport, self._waited)
        self._deltas = Deltas(self.bundle.counters())

    def run(self, rounds: int) -> Report:
        for _ in range(rounds):
            try:
                self.bundle.run_round()
            except self.transport.dead:
                self._waited()
                break
        state: dict[str, float] = {"ps_waits": self.ps_waits}
        if self.local_replay is not None:
            state.update({f"replay/{k}": v for k, v in self.local_replay.stats().items()})
        return Report(self._deltas(self.bundle.counters()), self.bundle.actor.drain_returns(), state=state)

    def finish(self) -> None:
        """What the envs hold in the n-step adders goes to the replay; the envs close."""
        self.bundle.actor.flush()
        self.bundle.actor.close()

    def pid(self) -> int:
        return os.getpid()


class ActorLearnerWorker(WaitsForShards):
    """An A3C actor-learner: `run(steps, global_frames)` makes whole rollouts until `steps` agent steps
    are done. Its store is the run's shared-memory one, attached by name, or the shards linked as "ps";
    a shard restarting ends a call early, and the worker waits and goes on."""

    def __init__(self, wiring: ActorLearnerParts, index: int, links: dict[str, list], transport: Transport):
        self.transport, self.ps_waits = transport, 0
        self.store = wiring.store_client(links.get("ps", []), transport)
        self.worker = retry(lambda: wiring.make_actor_learner(index, self.store), transport, self._waited)
        self._deltas = Deltas(self.worker.counters())

    def run(self, steps: int, global_frames: int) -> Report:
        try:
            self.worker.run(steps, global_frames)
        except self.transport.dead:
            self._waited()  # report what was done; the next call tries again
        return Report(self._deltas(self.worker.counters()), self.worker.drain_returns(),
                      state={"ps_waits": self.ps_waits})

    def finish(self) -> None:
        """The env closes; an attached shared store is let go (its owner frees it)."""
        self.worker.close()
        if hasattr(self.store, "close"):
            self.store.close()

    def pid(self) -> int:
        return os.getpid()


class GradientWorker(WaitsForShards):
    """A BA3C worker: `run(gradients)` computes that many gradients on batches of its envs' data. In sync
    mode each is computed on the newest parameters and pushed to the chief, for the round those
    parameters belong to (the call waits while the chief waits for the round's other pushes, where
    workers run apart); in async mode each goes to the shards, and the result comes back in the same
    round trip. `wiring.delays[index]` seconds are added to each gradient (tests of stragglers)."""

    def __init__(self, wiring: GradientParts, index: int, links: dict[str, list], transport: Transport):
        self.index, self.transport, self.ps_waits = index, transport, 0
        self.delay_s = wiring.delays[index]
        self.chief = links["chief"][0] if links.get("chief") else None
        self.ps = wiring.shard_client(links["ps"], transport)
        self.worker = wiring.make_gradient_worker(index)
        self.dropped_late = 0
        # The round a gradient is for: the newest the shards or the chief's last reply name. Not the
        # shards' alone: a shard restored from a checkpoint lags, and every gradient labelled by it would be late.
        self.round = -1
        self._pull()
        self._deltas = Deltas(self.counters())

    def _pull(self) -> None:
        flat, self.versions = retry(self.ps.pull, self.transport, self._waited)
        self.worker.load(flat)
        self.round = max(self.round, int(self.versions.max()))

    def counters(self) -> dict[str, float]:
        return {**self.worker.counters(), "dropped_late": self.dropped_late}

    def run(self, gradients: int) -> Report:
        t = self.transport
        try:
            for _ in range(gradients):
                if self.chief is not None:
                    self._pull()
                grad = self.worker.gradient()
                if self.delay_s:
                    t.idle(self.delay_s)
                if self.chief is not None:
                    self.round, counted = t.gather([t.call(self.chief, "push", grad, self.round, self.index)])[0]
                    self.dropped_late += not counted
                else:
                    flat, self.versions = self.ps.push_pull(grad, self.versions)
                    self.worker.load(flat)
        except t.dead:
            self._waited()  # the chief or a shard is restarting: pull again and go on next call
            self._pull()
        return Report(self._deltas(self.counters()), self.worker.drain_returns(), state={"ps_waits": self.ps_waits})

    def finish(self) -> None:
        self.worker.close()

    def pid(self) -> int:
        return os.getpid()


class EvaluatorWorker:
    """Evaluates the parameters it is given under the wiring's protocol."""

    def __init__(self, wiring: EvaluatorParts, index: int = 0, links: dict | None = None, transport: Any = None):
        with torch.random.fork_rng(devices=[]):  # building its net must not move the run's torch RNG
            self.evaluator = wiring.make_evaluator()

    def evaluate(self, params: dict[str, Any], updates: int) -> dict:
        return {**self.evaluator.evaluate({k: torch.as_tensor(v) for k, v in params.items()}, updates),
                "updates": updates}
