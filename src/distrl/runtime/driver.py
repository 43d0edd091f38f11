"""The training loop (DESIGN.md section 4): keep every called role busy, add what its calls report,
count restarts, checkpoint and evaluate on schedule, stop at max_frames (or at the first periodic
evaluation that reaches stop_return), save and evaluate at the end.

The driver is the one owner of the run's state: stateful roles hand it their snapshots as data and it
writes each checkpoint (checkpoint.py); it reads the newest one and hands each role its part at a
resumed start and whenever Ray has restarted the role, on whatever host. No role reads or writes a file.

It knows no architecture (its Topology says what its roles are) and no place (the placement starts the
roles and gives the transport that reaches them): inline in this process, or Ray."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np

from distrl.architectures.base import Pacing, Role, Topology
from distrl.checkpoint import load_replay, replay_set, state_digest
from distrl.components import chunks
from distrl.components.evaluator import VIDEO_DIR
from distrl.components.monitor import Monitor
from distrl.errors import ConfigError, NotRestored
from distrl.runtime.calls import ray_call
from distrl.transport import retry

_DEAD = -1


def count_restart(pids: dict[Any, int], key: Any, pid: int | None, faults: dict[str, int], fault: str) -> None:
    """Count a worker's deaths (the placement restarts each): a failed call (pid None) or a report from
    a new process. Once per death: one death can fail two calls (the running one and one sent before
    the placement noticed), and a worker killed between calls fails none but reports a new pid."""
    last = pids.get(key)
    if (pid is None and last != _DEAD) or (pid is not None and last not in (None, _DEAD, pid)):
        faults[fault] += 1
    pids[key] = _DEAD if pid is None else pid


def start_roles(placement: Any, roles: tuple[Role, ...], handles: dict[str, list[Any]] | None = None,
                started: Callable[[Role], None] | None = None) -> dict[str, list[Any]]:
    """Start each role's instances on `placement` once the roles it links to exist (inline, that is the
    order torch and numpy draw in), filling and returning `handles` (role name -> instances); `started(role)`
    runs once a role's instances exist, before any role linked to it starts. Benches and tests use it to
    place an architecture's roles without the training loop."""
    handles = {} if handles is None else handles
    waiting = list(roles)
    while waiting:
        role = next((r for r in waiting if all(link in handles for link in r.links)), None)
        if role is None:
            raise ValueError(f"roles {[r.name for r in waiting]} link to roles that never start")
        links = {name: handles[name] for name in role.links}
        handles[role.name] = [placement.start(role, i, links) for i in range(role.count)]
        if started is not None:
            started(role)
        waiting.remove(role)
    return handles


def drive(cfg: Any, topology: Topology, placement: Any, run_dir: Path, monitor: Monitor,
          hook: Callable[[dict[str, Any]], None] | None = None,
          saved: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run `topology` (of the run configured by `cfg`) to max_frames on `placement`. `hook(state)` is called
    on every tick with the totals and every role's instances (fault injection and bench/peers use it);
    training waits while it runs. `saved()` after every checkpoint written (a run at a URI pushes its mirror
    there)."""
    return Driver(cfg, topology, placement, Path(run_dir), monitor, hook, saved).run()


class Driver:
    def __init__(self, cfg: Any, topology: Topology, placement: Any, run_dir: Path, monitor: Monitor,
                 hook: Callable[[dict[str, Any]], None] | None, saved: Callable[[], None] | None = None):
        self.topology, self.hooks = topology, topology.hooks
        self.placement, self.transport = placement, placement.transport
        self.cfg, self.run_dir, self.monitor, self.hook, self.saved = cfg, run_dir, monitor, hook, saved
        self.roles = topology.roles
        self.pacing = self._banded(topology.pacing)
        self.handles: dict[str, list[Any]] = {}
        self.totals: dict[str, float] = {}
        self.gauges: dict[str, dict[str, float]] = {}  # each role's latest reported gauges
        self.instance_gauges: dict[str, dict[int, dict[str, float]]] = {}  # ... and each instance's
        self.counted = [r for r in self.roles if r.called or r.fault]  # roles whose restarts the summary counts
        self.faults = {r.fault_key: 0 for r in self.counted}
        self.pids: dict[tuple[str, int], int] = {}
        self.served_stats: dict[str, list[dict[str, Any]]] = {}  # the served roles' last stats, per instance
        self.latest_counters: dict[str, float] = {}  # the latest counters()
        self.evaluations: list[dict[str, Any]] = []
        self.eval_call: Any = None
        self.reached: dict[str, Any] | None = None  # the periodic evaluation that reached stop_return
        self.told_dead = False  # a dead network is told once a run
        self.deadline = math.inf  # perf_counter() at which max_seconds ends training
        self.saves_replay = bool(getattr(getattr(self.cfg, "replay", None), "checkpoint", False))
        self.stateful = (topology.saved_role, *(("replay",) if self.saves_replay else ()))
        self.held: dict[str, list[Any]] = {}  # the stateful parts the driver's process holds (parts_held_by_driver)
        self.checks: dict[tuple[str, int], Any] = {}  # needs_state calls out, per stateful instance
        # each restarted instance handed its state, and whether it holds it exactly
        self.restores: list[dict[str, Any]] = []
        self.last_check = 0.0

    # ---- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        data = self._newest()
        resumed_from = self._restore_progress(data)
        self.placement.check(self.roles, self.cfg)
        with self.hooks.held_by_driver():
            self.held = self.hooks.parts_held_by_driver()
            for name, parts in self.held.items():
                for i, part in enumerate(parts):
                    if data is not None:
                        part.load_state_dict(data["roles"][name][i])
            try:
                self._start_roles(data)
                self.monitor.start(self.counters())
                self.deadline = time.perf_counter() + self.cfg.max_seconds
                try:
                    self._loop()
                except KeyboardInterrupt:  # Ctrl-C, or SIGTERM turned into it by the CLI: save where it stopped
                    self._save_on_interrupt()
                    raise
                return {**self._finish(), "resumed_from": resumed_from}
            finally:
                self.placement.stop([h for hs in self.handles.values() for h in hs])

    def _newest(self) -> dict[str, Any] | None:
        """The run's newest checkpoint, checked against this run; None before the first."""
        return self.topology.checkpoints.restore(self.run_dir, required=False)

    def _restore_progress(self, data: dict[str, Any] | None) -> str | None:
        """The newest checkpoint's counters and recent returns (the roles get their states as they start)."""
        if not data:
            return None
        self.totals = {k: float(v) for k, v in data["counters"].items() if "/" in k}
        if self.pacing is not None and not self.saves_replay:  # the replay refills: its ratio starts anew
            self.pacing = self.pacing.from_now(self.totals)
        self.monitor.add_returns(list(data["returns"]))
        return cast(str, data["path"])

    def _start_roles(self, data: dict[str, Any] | None) -> None:
        def started(role: Role) -> None:  # each stateful role has its state before a role that calls it starts
            if data is not None and role.name in self.stateful and role.name not in self.held:
                for i in range(role.count):
                    self._hand(role.name, i, data)

        start_roles(self.placement, self.roles, self.handles, started)
        if self.topology.watched_return:
            self.monitor.watch(self.topology.watched_return)

    def _loop(self) -> None:
        called = [(r, i) for r in self.roles if r.called for i in range(r.count)]
        free, pending = list(called), {}
        every = self.cfg.checkpoint_every
        self.next_checkpoint = (self.progress() // every + 1) * every
        self.next_eval = self.progress() + self.cfg.eval_every
        self.last_log = time.perf_counter()
        while (reason := self.stop_reason()) is None:
            for role, i in list(free):
                if (n := self._call_size(role)) is not None:
                    args = self.hooks.call_args(role.name, self.frames())
                    call = self.transport.call(self.handles[role.name][i], "run", n, *args)
                    pending[call] = (role, i)
                    free.remove((role, i))
                    if self.pacing is not None and role.name == self.pacing.inserter \
                            and self.transport.wait([call], timeout=0):
                        free.append(pending.pop(call))  # done at once (inline): the learner's size counts its inserts
                        self._add(role, i, call)
            for call in self.transport.wait(list(pending), timeout=0.5) if pending else []:
                free.append(pending.pop(call))
                self._add(*free[-1], call)
            if not pending:
                self.transport.idle(0.005)  # every worker waits for the limiter
            free.sort(key=called.index)
            self._tick()
        self.pending, self.stopped_by = pending, reason

    def stop_reason(self) -> str | None:
        """Why training ends now: max_frames, stop_return or max_seconds; None while it goes on."""
        if self.frames() >= self.cfg.max_frames:
            return "max_frames"
        if self.reached is not None:
            return "stop_return"
        return "max_seconds" if time.perf_counter() >= self.deadline else None

    def _call_size(self, role: Role) -> float | None:
        """How much the next call of `role` may do (its Work on this placement, within the pacing), or
        None: not now."""
        if not self.hooks.may_call(role.name, self.totals, self.gauges):
            return None
        n: float = self.placement.call_size(role.work, self.cfg)
        pacing = self.pacing
        if pacing is not None and role.name == pacing.inserter and not pacing.may_insert(self.totals, self.gauges):
            return None
        if pacing is not None and role.name == pacing.sampler:
            n = min(n, pacing.batches(self.totals))
            return n if n >= 1 else None
        return n

    def _banded(self, pacing: Pacing | None) -> Pacing | None:
        """The pacing with its band: one Ray call of every inserter, on every placement, so that one seed's
        run is paced alike in one process and on Ray."""
        if pacing is None:
            return None
        inserter = next(r for r in self.roles if r.name == pacing.inserter and r.work is not None)
        assert inserter.work is not None
        return pacing.banded(inserter.count * ray_call(inserter.work, self.cfg))

    def _finish(self) -> dict[str, Any]:
        self.hooks.release_waiters(self.handles, self.transport)
        for call in list(self.pending):  # calls in flight complete and count
            role, i = self.pending.pop(call)
            self._add(role, i, call)
        for call in [self.transport.call(h, "finish") for r in self.roles if r.called for h in self.handles[r.name]]:
            try:
                self.transport.gather([call])
            except self.transport.dead:
                pass  # died at the end: its unsent data is lost, as any dead actor's
        retry(self.save, self.transport)
        final = self.log()
        evaluation = retry(lambda: self._received(self.transport.gather([self._start_eval()])[0]), self.transport) \
            if self.cfg.eval_episodes else None
        if evaluation is not None:
            self.monitor.log_eval(evaluation)  # the last row of evaluations.csv (and of a tracker's curve)
            self._tell_dead(evaluation)
        faults = {**self.faults, **{k: int(final[k]) for k in self.topology.fault_gauges}}
        return {"frames": int(final["frames"]), "updates": int(self.progress()), "evaluation": evaluation,
                "replay_size": int(final.get("replay_size", 0)), "faults": faults, "evaluations": self.evaluations,
                "reached": self.reached, "restores": self.restores, "stopped_by": self.stopped_by}

    # ---- reports and restarts ----------------------------------------------------------------
    def _add(self, role: Role, i: int, call: Any) -> None:
        """A finished call's counter deltas and returns; a failed one means its process died (the
        placement restarts it) and what it was doing is lost."""
        try:
            report = self.transport.gather([call])[0]
        except self.transport.dead as exc:
            if getattr(exc, "actor_init_failed", False):  # it would fail the same way every time
                cause = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                raise ConfigError(f"{role.name} {i} could not start ({cause[:300]}); the run is stopped") from None
            self._count_restart(role, i, None)
            if isinstance(exc, NotRestored):  # restarted between calls: it gets its state before the next one
                self._rehand(role.name, i)
            return
        self._count_restart(role, i, report.pid)
        for k, v in report.counters.items():
            key = f"{role.name}/{k}"
            self.totals[key] = self.totals.get(key, 0) + v
        self.monitor.add_returns(report.returns)
        self.monitor.add_watched_returns(report.watched_returns)
        self.gauges.setdefault(role.name, {}).update(report.state)
        self.instance_gauges.setdefault(role.name, {})[i] = report.state

    def _count_restart(self, role: Role, i: int, pid: int | None) -> None:
        count_restart(self.pids, (role.name, i), pid, self.faults, role.fault_key)

    # ---- counters, schedule ------------------------------------------------------------------
    def frames(self) -> float:
        return sum(v for k, v in self.totals.items() if k.endswith("/frames"))

    def progress(self) -> float:
        """The counter the schedule follows: a called role's total, or (Gorila's server version) one the
        architecture derives from served stats, as of the latest counters()."""
        key = self.topology.progress_key
        return self.totals[key] if key in self.totals else self.latest_counters.get(key, 0)

    def counters(self) -> dict[str, float]:
        """The architecture's counters from the totals, the served roles' stats and the reports; each role's restarts."""
        for role in self.roles:
            if role.name in self.topology.stats_roles and self.handles.get(role.name):
                try:
                    calls = [self.transport.call(h, "stats") for h in self.handles[role.name]]
                    self.served_stats[role.name] = self.transport.gather(calls, timeout=30)
                except self.transport.dead:
                    pass  # restarting: its last stats stand
        for role in self.counted:
            if (n := self.placement.restarts(self.handles.get(role.name, []))) is not None:
                self.faults[role.fault_key] = n
        self.latest_counters = self.hooks.counters(self.totals, self.served_stats, self.instance_gauges)
        return {**self.latest_counters, "actors/frames": self.frames()}

    def log(self) -> dict[str, float]:
        self.last_log = time.perf_counter()
        c = self.counters()
        sizes = {f"{name}_size": c[f"{name}/size"] for name in self.topology.stats_roles if f"{name}/size" in c}
        return self.monitor.log(c, {**sizes, **self.hooks.gauges(c), **self.faults})

    def _tick(self) -> None:
        if self.placement.name == "inline" and self.topology.progress_key not in self.totals:
            self.counters()  # served progress (cheap in one process): the schedule follows it every round
        try:
            self._watch_restarts()
            if self.progress() >= self.next_checkpoint:
                self.save()
                every = self.cfg.checkpoint_every
                self.next_checkpoint = (self.progress() // every + 1) * every
            self._poll_eval()
            if time.perf_counter() - self.last_log >= self.cfg.log_every_s:
                self.log()
                if self.cfg.eval_every and self.cfg.eval_episodes and self.eval_call is None \
                        and self.progress() >= self.next_eval:
                    self.eval_call = self._start_eval()
                    self._poll_eval()  # inline it is done: a stop comes before another update
        except self.transport.dead:
            pass  # a role it asked is restarting: the next tick tries again
        if self.hook is not None:
            self.hook({"totals": {**self.totals, "frames": self.frames()}, "faults": self.faults,
                       "run_dir": self.run_dir, **self.handles})

    def _start_eval(self) -> Any:
        params, version = self.hooks.policy(self.handles, self.transport)
        self.next_eval = version + self.cfg.eval_every
        return self.transport.call(self.handles["evaluator"][0], "evaluate", params, version)

    def _received(self, result: dict[str, Any]) -> dict[str, Any]:
        """An evaluation's video arrives as bytes: written into the run here, its path in the result."""
        video = result.get("video")
        if isinstance(video, dict):
            folder = self.run_dir / VIDEO_DIR
            folder.mkdir(parents=True, exist_ok=True)
            (folder / video["name"]).write_bytes(video["data"])
            result = {**result, "video": str(folder / video["name"])}
        return result

    def _poll_eval(self) -> None:
        if self.eval_call is None or not self.transport.wait([self.eval_call], timeout=0):
            return
        try:
            self.evaluations.append(self._received(self.transport.gather([self.eval_call])[0]))
            self.monitor.log_eval(self.evaluations[-1])
        except self.transport.dead:
            pass  # the evaluator died with it; the next one is asked for later
        else:
            result = self.evaluations[-1]
            self._tell_dead(result)
            if result["mean"] >= self.cfg.stop_return:
                self.reached = {"updates": result.get("updates", 0), "return_mean": result["mean"],
                                "frames": self.frames()}
                print(f"distrl: the evaluation after {self.reached['updates']:,} updates scored {result['mean']:.1f}, "
                      f"at least stop_return {self.cfg.stop_return:g}: stopping", file=sys.stderr)
        self.eval_call = None

    def _tell_dead(self, result: dict[str, Any]) -> None:
        """Once a run: an evaluation whose network gave one output on every state after learning began."""
        if result.get("output_spread") == 0.0 and result.get("updates", 0) > 0 and not self.told_dead:
            self.told_dead = True
            print(f"distrl: the evaluation after {result['updates']:,} updates saw the network give one output on "
                  "every state (a dead network: its ReLU units no longer fire, or its outputs saturate), so no gradient "
                  "can change that and the run will not learn. Start it again with a lower learner.lr or another seed",
                  file=sys.stderr)

    # ---- state: the checkpoint, and a restarted role's part of it --------------------------------
    def save(self) -> str:
        """Every stateful role's snapshot (and, with replay.checkpoint, the replay set, in pieces) written
        as one checkpoint under the saved role's update count."""
        name, t = self.topology.saved_role, self.transport
        if name in self.held:
            snaps = [{"state": part.state_dict()} for part in self.held[name]]
        else:
            try:
                snaps = t.gather([t.call(h, "snapshot") for h in self.handles[name]])
            except NotRestored:  # a restart the watch has not caught yet: handed its state now, saved next try
                for i, handle in enumerate(self.handles[name]):
                    if t.gather([t.call(handle, "needs_state")])[0]:
                        self._rehand(name, i)
                raise
        states = [s["state"] for s in snaps]
        rng = next((s["rng"] for s in snaps if s.get("rng") is not None), None)
        step = min(int(s["updates"] if "updates" in s else s["version"]) for s in states)
        episodes = sum(v for k, v in self.totals.items() if k.endswith("/episodes"))
        counters = {"frames": self.frames(), "episodes": episodes, **self.totals}
        path = self.topology.checkpoints.save(self.run_dir, step, {name: states}, counters,
                                              list(self.monitor.returns), rng=rng, replay=self._replay_set(),
                                              keep=self.cfg.keep_checkpoints)
        if self.saved is not None:
            self.saved()
        return str(path)

    def _replay_set(self) -> dict[int, dict[str, np.ndarray]] | None:
        if not self.saves_replay or not self.handles.get("replay"):
            return None
        try:
            return {i: chunks.fetch(self.transport, h) for i, h in enumerate(self.handles["replay"])}
        except self.transport.dead:
            return None  # a shard is restarting: this checkpoint goes without a replay set

    def _hand(self, name: str, i: int, data: dict[str, Any] | None, restart: bool = False) -> dict[str, Any] | None:
        """Instance i of role `name` gets its part of checkpoint `data` (None: its initial state stands);
        returns what it says it restored (Restorable.restored), None where `restart` and it was not waiting."""
        t, handle = self.transport, self.handles[name][i]
        snapshot: dict[str, Any] | None = None
        source: str | None = None
        if data is not None and name == "replay":
            path = replay_set(self.run_dir).get(i)
            if path is not None:
                chunks.send(t, handle, load_replay(path))
                snapshot, source = {"source": str(path)}, str(path)
        elif data is not None:
            snapshot, source = {"state": data["roles"][name][i], "rng": data.get("rng")}, data["path"]
        return cast(dict[str, Any] | None, t.gather([t.call(handle, "restore", snapshot, source, restart)])[0])

    def _rehand(self, name: str, i: int) -> None:
        """A restarted instance gets its part of the newest checkpoint, read again from the run's storage;
        what it loaded is recorded (the summary's restores), with whether it holds exactly the saved state."""
        data = self._newest()
        try:
            info = self._hand(name, i, data, restart=True)
        except self.transport.dead:
            return  # it died again: its next incarnation asks anew
        if info is None:
            return  # handed already
        record = {"role": name, "index": i, "checkpoint": info["path"], "pid": info["pid"],
                  "frames": int(self.frames())}
        if name == "replay":
            record["size"] = info["size"]
        elif data is not None:
            saved = data["roles"][name][i]
            record["updates"] = int(saved["updates"] if "updates" in saved else saved["version"])
            record["exact"] = state_digest(saved) == info["digest"]
        self.restores.append(record)

    def _watch_restarts(self) -> None:
        """Where roles can restart (Ray), ask each stateful instance a few times a second whether it is a
        restart still waiting for its state, and hand it that state."""
        if self.placement.name == "inline" or time.perf_counter() - self.last_check < 0.25:
            return
        self.last_check, t = time.perf_counter(), self.transport
        for name in self.stateful:
            for i, handle in enumerate(self.handles.get(name, []) if name not in self.held else []):
                call = self.checks.get((name, i))
                if call is None:
                    self.checks[(name, i)] = t.call(handle, "needs_state")
                    continue
                if not t.wait([call], timeout=0):
                    continue
                del self.checks[(name, i)]
                try:
                    needs = t.gather([call])[0]
                except t.dead:
                    continue
                if needs:
                    self._rehand(name, i)

    def _save_on_interrupt(self) -> None:
        """A second signal during the save ends it at once; a role that is restarting keeps its newest
        periodic checkpoint."""
        try:
            print(f"distrl: saved {self.save()}", file=sys.stderr)
        except self.transport.dead:
            pass
