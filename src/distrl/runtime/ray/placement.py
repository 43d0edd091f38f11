"""The Ray placement: each role instance a Ray actor that Ray restarts when its process dies, reached
through RayTransport. With no address `ray.init()` starts a local Ray; with one the run joins it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from distrl.architectures.base import Role, Wiring
from distrl.components.monitor import Monitor
from distrl.errors import ConfigError
from distrl.runtime.driver import drive
from distrl.runtime.ray.cluster import RESTART, call, connect


class RayTransport:
    """distrl.transport's verbs over Ray actor handles and object refs."""

    remote = True
    dead: tuple[type[BaseException], ...] = (RayActorError, GetTimeoutError)  # gone, restarting, or not answering
    call = staticmethod(call)
    put = staticmethod(ray.put)
    idle = staticmethod(time.sleep)

    @staticmethod
    def gather(calls: list, timeout: float | None = None) -> list:
        return ray.get(calls, timeout=timeout)

    @staticmethod
    def wait(calls: list, timeout: float | None = None) -> list:
        """The calls that have finished: at least one, unless `timeout` seconds pass first."""
        ready = ray.wait(calls, num_returns=1, timeout=timeout)[0] if calls else []
        return ray.wait(calls, num_returns=len(calls), timeout=0)[0] if ready else []


class RayPlacement:
    transport = RayTransport

    def __init__(self) -> None:
        self._classes: dict[type, Any] = {}

    @staticmethod
    def check(roles: list[Role]) -> None:
        """Before anything starts: a node address no live node has fails first."""
        for role in roles:
            node_affinity(role.node)

    def start(self, wiring: Wiring, role: Role, index: int, links: dict[str, list]) -> Any:
        options: dict[str, Any] = {"num_cpus": 1, **RESTART, **node_affinity(role.node)}
        if role.threads > 1:
            options["max_concurrency"] = role.threads  # answers calls (params, checkpoint) while it runs one
        if role.gpus:
            options["num_gpus"] = role.gpus if role.gpus > 0 else float(ray.cluster_resources().get("GPU", 0) >= 1)
        if role.cls not in self._classes:
            self._classes[role.cls] = ray.remote(role.cls)
        return self._classes[role.cls].options(**options).remote(wiring, index, links, RayTransport)

    @staticmethod
    def restarts(handles: list) -> int | None:
        """The restarts Ray's actor table records for `handles`: exact even when a restarted worker dies
        again before it reports. Ray keeps that table behind a private API: where it is missing or
        moved, None, and the driver's own count (failed calls, new pids) stands."""
        try:
            from ray._private import state
            return sum(int(state.actors(h._actor_id.hex())["NumRestarts"]) for h in handles)
        except Exception:  # noqa: BLE001 - any failure of a private API means: keep our own count
            return None

    @staticmethod
    def stop(handles: list) -> None:
        for handle in handles:
            ray.kill(handle)


def node_affinity(node_ip: str) -> dict:
    """Soft node affinity: the role starts on the node at `node_ip`, and Ray restarts it on another
    node once that one is gone (the placement a cluster of CPU actor hosts wants)."""
    if not node_ip:
        return {}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    alive = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    if node_ip not in alive:
        raise ConfigError(f"ray.actor_node={node_ip!r}: no live node of this Ray cluster has that address "
                          f"(its nodes: {', '.join(sorted(alive))}); give one of those, or leave it empty")
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(alive[node_ip], soft=True)}


@contextmanager
def ray_placement(address: str, cpus: int) -> Iterator[RayPlacement]:
    """Join `address` (or start a local Ray for at least `cpus` CPUs) and shut down what was started."""
    started = connect(address, cpus)
    try:
        yield RayPlacement()
    finally:
        if started:
            ray.shutdown()


def run(wiring: Wiring, run_dir: Path, monitor: Monitor, resume: bool = False,
        hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Any wiring on Ray, a CPU for each of its role instances. `resume` needs nothing here: the stateful
    roles restore themselves from the run's newest checkpoint."""
    cpus = sum(role.count for role in wiring.roles(True))
    with ray_placement(wiring.cfg.address, cpus) as placement:
        return drive(wiring, placement, run_dir, monitor, hook)
