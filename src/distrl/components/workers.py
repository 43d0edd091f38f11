"""Components as roles of a run: each takes (parts, index, links, transport), so one class runs in
this process (inline) or in its own (Ray) unchanged, and a called role answers `run(n) -> Report`.

`parts` is what the role builds itself from (its Role carries it), typed by the one Protocol of
distrl.contracts that names it. `links` maps a role's name to the instances (or remote handles) of the roles it
talks to; the transport is the only way it reaches them, and the only thing that says what differs
where it runs apart from them (contracts.Transport)."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from contextlib import nullcontext
from typing import Any, cast

import torch

from distrl.checkpoint import state_digest
from distrl.components.chunks import ChunkedState
from distrl.components.staging import DeviceStager
from distrl.contracts import (
    ActorLearnerParts,
    ActorParts,
    BundleParts,
    EvaluatorParts,
    GradientParts,
    LearnerParts,
    Prefetch,
    ReplayParts,
    Report,
    ShardParts,
    Transport,
)
from distrl.errors import NotRestored
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


class Restorable:
    """A role whose state the run keeps: the driver takes its `snapshot()` into each checkpoint and hands it
    back with `restore()`, at the start of a resumed run and whenever Ray has restarted it, on any host. A
    restarted one refuses work (NotRestored, which callers take as "restarting") until then, so it never
    serves its initial values as the run's. A snapshot is {"state": ..., "rng": the torch RNG where it
    draws from it}; `restored()` is what a fault test compares with the file."""

    restored_from: str | None = None
    restored_digest: str | None = None
    awaiting_state = False

    def await_state_if_restarted(self, transport: Any) -> None:
        self.awaiting_state = bool(transport is not None and transport.restarted())

    def needs_state(self) -> bool:
        return self.awaiting_state

    def snapshot(self) -> dict[str, Any]:
        raise NotImplementedError

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        raise NotImplementedError

    def restore(self, snapshot: dict[str, Any] | None, source: str | None = None,
                restart: bool = False) -> dict[str, Any] | None:
        """`snapshot` as snapshot() gave it, from the checkpoint `source`; None: the initial state stands.
        Returns restored(). With `restart`, only an incarnation still waiting for its state takes it (the
        driver may learn of one restart twice); the others answer None."""
        if restart and not self.awaiting_state:
            return None
        if snapshot is not None:
            self.load_snapshot(snapshot)
            self.restored_from, self.restored_digest = source, self.digest()
        self.awaiting_state = False
        return self.restored()

    def digest(self) -> str | None:
        """A digest of the state right after a restore, compared with the file's."""
        raise NotImplementedError

    def check_restored(self) -> None:
        if self.awaiting_state:
            raise NotRestored(f"{type(self).__name__} was restarted and waits for its state from the driver")

    def restored(self) -> dict[str, Any]:
        """The checkpoint this incarnation was handed, with a digest of its state right after loading, and
        whether it still waits for it."""
        return {"path": self.restored_from, "digest": self.restored_digest, "pid": os.getpid(),
                "awaiting": self.awaiting_state}


class ReplayShard(ReplayTable, ChunkedState, Restorable):
    """One replay table of a run. With replay.checkpoint on, the driver saves it with each checkpoint and
    hands a restarted one (or --resume) its slice of the newest checkpoint's set; until then it takes and
    serves experience as an empty table would."""

    def __init__(self, parts: ReplayParts, index: int = 0, links: dict[str, list[Any]] | None = None,
                 transport: Any = None):
        super().__init__(*parts.replay_args(index))
        self.await_state_if_restarted(transport)

    def snapshot(self) -> dict[str, Any]:
        return {"state": self.state_dict()}

    def state_begin(self) -> dict[str, tuple[tuple[int, ...], str]]:
        self.check_restored()  # a restarted shard's set is not the run's until the driver handed it back
        return super().state_begin()

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        """The arrays sent in pieces (state_put), or given whole in `snapshot["state"]`; the shard keeps its limiter."""
        state = snapshot.get("state") or self.state_taken()
        limiter = self.limiter
        self.__dict__.update(ReplayTable.from_state(state, snapshot.get("source", "replay state")).__dict__)
        self.limiter = limiter

    def restore(self, snapshot: dict[str, Any] | None, source: str | None = None,
                restart: bool = False) -> dict[str, Any] | None:
        try:
            return super().restore(snapshot, source, restart)
        finally:
            self.state_taken()  # pieces a restore did not take are let go

    def digest(self) -> None:
        return None  # a replay set is checked by its size (restored())

    def restored(self) -> dict[str, Any]:
        return {"path": self.restored_from, "size": len(self), "pid": os.getpid(), "awaiting": self.awaiting_state}


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
    """An actor of a replay-fed run (DQN, Ape-X, Ape-X DPG, R2D2): `run(steps)` steps every env `steps` times."""

    def __init__(self, parts: ActorParts, index: int, links: dict[str, list[Any]], transport: Transport):
        r = parts.replay
        sink = transport.sink(r.client(links["replay"], transport), r.compressed, r.codec, r.shared)
        self.actor = parts.make_actor(index, sink, LearnerSource(links["learner"][0], transport))
        if (device := transport.device()) != "cpu":  # the placement granted this process a share of a GPU
            self.actor.place(device)
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


class LearnerWorker(Restorable):
    """The learner of a replay-fed run: `run(n)` makes up to n updates (as many as fit in the transport's
    call budget), sampling as the transport does (ahead, on threads, where the replay is remote), and
    pausing while the replay cannot sample (the start, or a restarted shard refilling). Its state (networks,
    optimizer, counters, its process's torch RNG) goes to and comes from the driver as data."""

    def __init__(self, parts: LearnerParts, index: int, links: dict[str, list[Any]], transport: Transport):
        self.parts, self.transport = parts, transport
        self.learner = parts.make_learner(transport.device())
        self.replay = parts.replay.client(links["replay"], transport)
        self.await_state_if_restarted(transport)
        self.replay_waits = 0
        self.skipped_updates = 0  # asked for while the replay could not sample: not made up later
        self.waiting = True
        self._prefetcher: Prefetch | None = None
        self.stager = DeviceStager(self.learner.device, parts.image_fields)
        self._lock = threading.Lock()
        self._deltas = Deltas(self.counters())
        self.published = transport.publisher(self.learner.latest)

    @property
    def updates(self) -> int:
        return cast(int, self.learner.updates)

    def latest(self) -> tuple[dict[str, torch.Tensor], int]:
        return cast(tuple[dict[str, torch.Tensor], int], self.learner.latest())

    def params(self) -> tuple[list[Any], int]:
        """([parameters], version), as the transport publishes them (on Ray: every ray.publish_every
        updates)."""
        self.check_restored()
        return self.published.get()

    def counters(self) -> dict[str, float]:
        return {**self.learner.counters(), "replay_waits": self.replay_waits, "skipped_updates": self.skipped_updates}

    def run(self, n: int) -> Report:
        self.check_restored()
        with self._lock:
            self._train(int(n))
        return Report(self._deltas(self.counters()), state={"waiting_for_replay": int(self.waiting)})

    def _train(self, n: int) -> None:
        t = self.transport
        if self.waiting:
            try:
                ready = self.replay.can_sample(self.parts.batch_size)
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
                learner_step(self.replay, self.learner, self._sample(), self.parts.trim_every)
                self.published.tick(self.learner.updates)
                if time.monotonic() >= deadline:
                    break
        except t.lost:
            self.replay_waits += 1  # the replay's data is gone: wait for it to refill
            self.waiting = True
            self._stop_prefetching()

    def _sample(self) -> Any:
        if self._prefetcher is None:
            p = self.parts
            self._prefetcher = self.transport.prefetch(lambda: self.stager.sample(self.replay, p.batch_size),
                                                       p.prefetch, p.prefetch_threads)
        return self._prefetcher.get()

    def _stop_prefetching(self) -> None:
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None

    def snapshot(self) -> dict[str, Any]:
        """The learner's state at one update, with its priorities sent to the replay first."""
        with self._lock:
            self.check_restored()
            self.published.publish()
            try:
                self.replay.flush_priorities()
            except self.transport.dead:
                pass  # a shard is restarting: its priorities are lost with its data
            return {"state": self.learner.state_dict(), "rng": torch.get_rng_state()}

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        with self._lock:
            self.learner.load_state_dict(snapshot["state"])
            if snapshot.get("rng") is not None:
                torch.set_rng_state(snapshot["rng"])
            self.published.publish()
            self._deltas = Deltas(self.counters())  # the run's counts go on from the checkpoint's

    def digest(self) -> str:
        return state_digest(self.learner.state_dict())

    def finish(self) -> None:
        self._stop_prefetching()

    def pid(self) -> int:
        return os.getpid()


def learner_step(replay: Any, learner: Any, sampled: Any, trim_every: int) -> dict[str, float]:
    """One step of a replay-fed learner: train on a sampled (keys, batch, weights), write its priorities
    back, and trim the replay to its capacity every `trim_every` updates."""
    keys, batch, weights = sampled
    metrics, priorities = learner.step(batch, weights)
    replay.update_priorities(keys, priorities)
    if learner.updates % trim_every == 0:
        replay.trim()
    return cast(dict[str, float], metrics)


class WaitsForShards:
    """A role that reaches parameter shards (or BA3C's chief) through `self.transport`: a call that
    finds one restarting waits a little, counted in `self.ps_waits`."""

    transport: Any
    ps_waits: int

    def _waited(self) -> None:
        self.ps_waits += 1
        self.transport.idle(0.2)


class ShardWorker(ParamShard, Restorable):
    """A parameter-server shard of a run (Gorila; A3C's sharded store, BA3C). One started again (a
    restart, or --resume) is handed its slice of the run's newest checkpoint by the driver, and refuses
    pulls and pushes until then."""

    def __init__(self, parts: ShardParts, index: int, links: dict[str, list[Any]] | None = None, transport: Any = None):
        values, options = parts.shard_args(index)
        super().__init__(values, **options)
        self.await_state_if_restarted(transport)

    def snapshot(self) -> dict[str, Any]:
        self.check_restored()
        return {"state": self.state_dict()}

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.load_state_dict(snapshot["state"])

    def digest(self) -> str:
        return state_digest(self.state_dict())

    def pull(self) -> tuple[Any, int]:
        self.check_restored()
        return super().pull()

    def push(self, grad: Any, version: int) -> bool:
        self.check_restored()
        return super().push(grad, version)

    def push_pull(self, grad: Any, version: int) -> tuple[Any, int]:
        self.check_restored()
        return super().push_pull(grad, version)

    def stats(self) -> dict[str, int]:
        self.check_restored()
        return self.counters()

    def pid(self) -> int:
        return os.getpid()


class BundleWorker(WaitsForShards):
    """A Gorila bundle (actor, replay, learner in one process): `run(rounds)` makes that many bundle rounds.
    The replay is the bundle's own table, or the shared one linked as "replay" (replay.mode=global). A
    parameter shard or the shared table restarting ends a call early; the bundle waits and goes on."""

    def __init__(self, parts: BundleParts, index: int, links: dict[str, list[Any]], transport: Transport):
        self.transport, self.ps_waits = transport, 0
        ps = parts.shard_client(links["ps"], transport)
        self.local_replay, sink = None, None
        if links.get("replay"):
            replay = parts.shared_replay_client(links["replay"], transport, index)
            sink = transport.sink(replay, parts.compressed(), parts.codec())
        else:
            replay = self.local_replay = parts.make_replay(index)
        self.bundle = retry(lambda: parts.make_bundle(index, ps, replay, sink), transport, self._waited)
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

    def __init__(self, parts: ActorLearnerParts, index: int, links: dict[str, list[Any]], transport: Transport):
        self.transport, self.ps_waits = transport, 0
        self.store = parts.store_client(links.get("ps", []), transport)
        self.worker = retry(lambda: parts.make_actor_learner(index, self.store), transport, self._waited)
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
    round trip. `parts.delays[index]` seconds are added to each gradient (tests of stragglers)."""

    def __init__(self, parts: GradientParts, index: int, links: dict[str, list[Any]], transport: Transport):
        self.index, self.transport, self.ps_waits = index, transport, 0
        self.delay_s = parts.delays[index]
        self.chief = links["chief"][0] if links.get("chief") else None
        self.ps = parts.shard_client(links["ps"], transport)
        self.worker = parts.make_gradient_worker(index)
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
    """Evaluates the parameters it is given under the run's protocol. A filmed evaluation is recorded into
    a temporary folder of this process and comes back as the file's bytes: the driver writes it into the run,
    so an evaluator on a host that shares no disk with the driver loses no video. The folder lives for one
    evaluation, so no process leaves one behind however it ends."""

    def __init__(self, parts: EvaluatorParts, index: int = 0, links: dict[str, list[Any]] | None = None,
                 transport: Any = None):
        with torch.random.fork_rng(devices=[]):  # building its net must not move the run's torch RNG
            self.evaluator = parts.make_evaluator()
        self.films = self.evaluator.video_dir is not None  # the run records videos; the schedule says which

    def evaluate(self, params: dict[str, Any], updates: int) -> dict[str, Any]:
        filmed = self.films and self.evaluator.films_next()
        with tempfile.TemporaryDirectory(prefix="distrl-video-") if filmed else nullcontext() as folder:
            self.evaluator.video_dir = folder
            result = {**self.evaluator.evaluate({k: torch.as_tensor(v) for k, v in params.items()}, updates),
                      "updates": updates}
            if "video" in result:
                path = result["video"]
                with open(path, "rb") as f:
                    result["video"] = {"name": os.path.basename(path), "data": f.read()}
        return result
