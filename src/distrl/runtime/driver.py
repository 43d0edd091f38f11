"""The training loop (DESIGN.md section 4): keep every called role busy, add what its calls report,
count restarts, checkpoint and evaluate on schedule, stop at max_frames (or at the first periodic
evaluation that reaches stop_return), save and evaluate at the end.

It knows no architecture (the wiring says what its roles are) and no place (the placement starts the
roles and gives the transport that reaches them): inline in this process, or Ray."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.architectures.base import Role, Wiring
from distrl.components.monitor import Monitor
from distrl.errors import ConfigError
from distrl.transport import retry

_DEAD = -1


def count_restart(pids: dict, key: Any, pid: int | None, faults: dict, fault: str) -> None:
    """Count a worker's deaths (the placement restarts each): a failed call (pid None) or a report from
    a new process. Once per death: one death can fail two calls (the running one and one sent before
    the placement noticed), and a worker killed between calls fails none but reports a new pid."""
    last = pids.get(key)
    if (pid is None and last != _DEAD) or (pid is not None and last not in (None, _DEAD, pid)):
        faults[fault] += 1
    pids[key] = _DEAD if pid is None else pid


def start_roles(wiring: Wiring, placement: Any, roles: list[Role], handles: dict[str, list] | None = None
                ) -> dict[str, list]:
    """Start each role's instances on `placement` once the roles it links to exist (inline, that is the
    order torch and numpy draw in), filling and returning `handles` (role name -> instances). Benches and
    tests use it to place a wiring's roles without the training loop."""
    handles = {} if handles is None else handles
    waiting = list(roles)
    while waiting:
        role = next((r for r in waiting if all(link in handles for link in r.links)), None)
        if role is None:
            raise ValueError(f"roles {[r.name for r in waiting]} link to roles that never start")
        links = {name: handles[name] for name in role.links}
        handles[role.name] = [placement.start(wiring, role, i, links) for i in range(role.count)]
        waiting.remove(role)
    return handles


def drive(wiring: Wiring, placement: Any, run_dir: Path, monitor: Monitor,
          hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Run `wiring` to max_frames on `placement`. `hook(state)` is called on every tick with the totals
    and every role's instances (fault injection and bench/peers use it); training waits while it runs."""
    return Driver(wiring, placement, Path(run_dir), monitor, hook).run()


class Driver:
    def __init__(self, wiring: Wiring, placement: Any, run_dir: Path, monitor: Monitor,
                 hook: Callable[[dict], None] | None):
        self.wiring, self.placement, self.transport = wiring, placement, placement.transport
        self.cfg, self.run_dir, self.monitor, self.hook = wiring.cfg, run_dir, monitor, hook
        self.roles = wiring.roles()
        self.pacing = wiring.pacing()
        self.handles: dict[str, list] = {}
        self.totals: dict[str, float] = {}
        self.state: dict[str, dict] = {}  # each role's latest reported gauges
        self.reported: dict[str, dict[int, dict]] = {}  # ... and each instance's
        self.counted = [r for r in self.roles if r.called or r.fault]  # roles whose restarts the summary counts
        self.faults = {r.fault_key: 0 for r in self.counted}
        self.pids: dict[tuple[str, int], int] = {}
        self.served: dict[str, list[dict]] = {}  # the served roles' last stats, per instance
        self.view: dict[str, float] = {}  # the latest counters()
        self.evaluations: list[dict] = []
        self.eval_call: Any = None
        self.reached: dict | None = None  # the periodic evaluation that reached stop_return

    # ---- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        resumed_from = self._restore_progress()
        self.placement.check(self.roles)
        with self.wiring.owned():
            try:
                self._start_roles()
                self.monitor.start(self.counters())
                try:
                    self._loop()
                except KeyboardInterrupt:  # Ctrl-C, or SIGTERM turned into it by the CLI: save where it stopped
                    self._save_on_interrupt()
                    raise
                return {**self._finish(), "resumed_from": resumed_from}
            finally:
                self.placement.stop([h for hs in self.handles.values() for h in hs])

    def _restore_progress(self) -> str | None:
        """The newest checkpoint's counters and recent returns (its roles restore themselves)."""
        data = self.wiring.restore(self.run_dir, required=False)
        if not data:
            return None
        counters = data["counters"]
        if not any("/" in k for k in counters):  # saved before the driver: the worker role's own counts
            counters = {f"{self.roles[0].name}/{k}": v for k, v in counters.items()}
        self.totals = {k: float(v) for k, v in counters.items() if "/" in k}
        self.monitor.add_returns(list(data["returns"]))
        return data["path"]

    def _start_roles(self) -> None:
        start_roles(self.wiring, self.placement, self.roles, self.handles)
        if getattr(self.wiring, "watched_return", None):
            self.monitor.watch(self.wiring.watched_return)

    def _loop(self) -> None:
        called = [(r, i) for r in self.roles if r.called for i in range(r.count)]
        free, pending = list(called), {}
        every = self.cfg.checkpoint_every
        self.next_checkpoint = (self.progress() // every + 1) * every
        self.next_eval = self.progress() + self.cfg.eval_every
        self.last_log = time.perf_counter()
        while self.frames() < self.cfg.max_frames and self.reached is None:
            for role, i in list(free):
                if (n := self._call_size(role)) is not None:
                    args = self.wiring.call_args(role.name, self.frames())
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
        self.pending = pending

    def _call_size(self, role: Role) -> float | None:
        """How much the next call of `role` may do (its Work on this placement, within the pacing), or
        None: not now."""
        if not self.wiring.may_call(role.name, self.totals, self.state):
            return None
        n = getattr(role.work, self.placement.name)
        pacing = self.pacing
        if pacing is not None and role.name == pacing.inserter and not pacing.may_insert(self.totals, self.state):
            return None
        if pacing is not None and role.name == pacing.sampler and pacing.paces_sampler:
            n = min(n, pacing.batches(self.totals))
            return n if n >= 1 else None
        return n

    def _finish(self) -> dict[str, Any]:
        self.wiring.stopping(self.handles, self.transport)
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
        evaluation = retry(lambda: self.transport.gather([self._start_eval()])[0], self.transport) \
            if self.cfg.eval_episodes else None
        if evaluation is not None:
            self.monitor.log_eval(evaluation)  # the last row of evaluations.csv (and of a tracker's curve)
        faults = {**self.faults, **{k: int(final[k]) for k in self.wiring.fault_gauges}}
        return {"frames": int(final["frames"]), "updates": int(self.progress()), "evaluation": evaluation,
                "replay_size": int(final.get("replay_size", 0)), "faults": faults, "evaluations": self.evaluations,
                "reached": self.reached}

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
            return
        self._count_restart(role, i, report.pid)
        for k, v in report.counters.items():
            key = f"{role.name}/{k}"
            self.totals[key] = self.totals.get(key, 0) + v
        self.monitor.add_returns(report.returns)
        self.monitor.add_watched_returns(report.watched_returns)
        self.state.setdefault(role.name, {}).update(report.state)
        self.reported.setdefault(role.name, {})[i] = report.state

    def _count_restart(self, role: Role, i: int, pid: int | None) -> None:
        count_restart(self.pids, (role.name, i), pid, self.faults, role.fault_key)

    # ---- counters, schedule ------------------------------------------------------------------
    def frames(self) -> float:
        return sum(v for k, v in self.totals.items() if k.endswith("/frames"))

    def progress(self) -> float:
        """The counter the schedule follows: a called role's total, or (Gorila's server version) one the
        wiring derives from served stats, as of the latest counters()."""
        key = self.wiring.progress_key
        return self.totals[key] if key in self.totals else self.view.get(key, 0)

    def counters(self) -> dict[str, float]:
        """The wiring's counters from the totals, the served roles' stats and the reports; each role's restarts."""
        for role in self.roles:
            if role.name in self.wiring.stats_roles and self.handles.get(role.name):
                try:
                    calls = [self.transport.call(h, "stats") for h in self.handles[role.name]]
                    self.served[role.name] = self.transport.gather(calls, timeout=30)
                except self.transport.dead:
                    pass  # restarting: its last stats stand
        for role in self.counted:
            if (n := self.placement.restarts(self.handles.get(role.name, []))) is not None:
                self.faults[role.fault_key] = n
        self.view = self.wiring.counters(self.totals, self.served, self.reported)
        return {**self.view, "actors/frames": self.frames()}

    def log(self) -> dict[str, float]:
        self.last_log = time.perf_counter()
        c = self.counters()
        sizes = {f"{name}_size": c[f"{name}/size"] for name in self.wiring.stats_roles if f"{name}/size" in c}
        return self.monitor.log(c, {**sizes, **self.wiring.gauges(c), **self.faults})

    def _tick(self) -> None:
        if self.placement.name == "inline" and self.wiring.progress_key not in self.totals:
            self.counters()  # served progress (cheap in one process): the schedule follows it every round
        try:
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
        params, version = self.wiring.policy(self.handles, self.transport)
        self.next_eval = version + self.cfg.eval_every
        return self.transport.call(self.handles["evaluator"][0], "evaluate", params, version)

    def _poll_eval(self) -> None:
        if self.eval_call is None or not self.transport.wait([self.eval_call], timeout=0):
            return
        try:
            self.evaluations.append(self.transport.gather([self.eval_call])[0])
            self.monitor.log_eval(self.evaluations[-1])
        except self.transport.dead:
            pass  # the evaluator died with it; the next one is asked for later
        else:
            result = self.evaluations[-1]
            if result["mean"] >= self.cfg.stop_return:
                self.reached = {"updates": result.get("updates", 0), "return_mean": result["mean"],
                                "frames": self.frames()}
                print(f"distrl: the evaluation after {self.reached['updates']:,} updates scored {result['mean']:.1f}, "
                      f"at least stop_return {self.cfg.stop_return:g}: stopping", file=sys.stderr)
        self.eval_call = None

    # ---- saving ------------------------------------------------------------------------------
    def save(self) -> str:
        episodes = sum(v for k, v in self.totals.items() if k.endswith("/episodes"))
        counters = {"frames": self.frames(), "episodes": episodes, **self.totals}
        return self.wiring.checkpoint(self.handles, self.transport, counters, list(self.monitor.returns))

    def _save_on_interrupt(self) -> None:
        """A second signal during the save ends it at once; a role that is restarting keeps its newest
        periodic checkpoint."""
        try:
            print(f"distrl: saved {self.save()}", file=sys.stderr)
        except self.transport.dead:
            pass
