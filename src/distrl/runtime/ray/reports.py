"""The driver side of worker calls for the A3C and BA3C Ray drivers: finished reports,
restarts counted once per death (runtime/driver.py's count_restart), periodic evaluations."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from distrl.components.monitor import Monitor
from distrl.runtime.driver import count_restart
from distrl.runtime.ray.placement import RayPlacement


def add_report(ref: Any, totals: dict, monitor: Monitor) -> dict | None:
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


def sync_restarts(faults: dict, key: str, handles: list) -> None:
    """Set faults[key] to the restarts Ray's actor table records for `handles` (RayPlacement.restarts);
    where that table cannot be read, the count from failed calls (count_restart) stands."""
    restarts = RayPlacement.restarts(handles)
    if restarts is not None:
        faults[key] = restarts


def collect_reports(pending: dict, totals: dict, monitor: Monitor, faults: dict, key: str, pids: dict,
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
        out = add_report(ref, totals, monitor)
        count_restart(pids, i, out and out["pid"], faults, key)
    return free


def poll_eval(ref: Any, evaluations: list[dict], monitor: Monitor) -> Any:
    """Log the periodic evaluation `ref` if it finished; returns the ref still pending, else None."""
    if ref is None or not ray.wait([ref], timeout=0)[0]:
        return ref
    try:
        evaluations.append(ray.get(ref))
        monitor.log_eval(evaluations[-1])
    except RayActorError:
        pass  # the evaluator died with it; the next one is asked for later
    return None


@contextmanager
def saved_on_interrupt(save: Callable[[], Any]) -> Iterator[None]:
    """Ctrl-C or SIGTERM (the CLI turns it into KeyboardInterrupt) inside the block: save where the run
    stopped, for --resume, then let the interrupt go on (the caller's finally shuts Ray down). A second
    signal during the save ends it at once; a part that is restarting keeps its newest periodic checkpoint."""
    try:
        yield
    except KeyboardInterrupt:
        try:
            print(f"distrl: saved {save()}", file=sys.stderr)
        except (RayActorError, GetTimeoutError):
            pass
        raise
