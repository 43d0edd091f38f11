"""The Ray placement: each role instance a Ray actor that Ray restarts when its process dies, reached
through RayTransport. With no address `ray.init()` starts a local Ray; with one the run joins it."""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import ray
import torch
from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError

from distrl.architectures.base import Role
from distrl.components.monitor import Monitor
from distrl.components.prefetcher import Prefetcher
from distrl.errors import ConfigError, NotRestored
from distrl.runtime.calls import ray_call
from distrl.runtime.driver import drive
from distrl.runtime.ray.clients import BoundedSink, Published
from distrl.runtime.ray.cluster import RESTART, call, connect

# A learner's call returns after this long even short of its n updates, so that a slow learner (a CPU one
# on Atari makes ~0.5 batches of 512 a second) never holds back the run's progress, checkpoints or stop.
LEARNER_CALL_S = 1.0
# A local Ray places up to this many role processes per core: most of them wait (actors on the replay's
# ratio, shards and the evaluator on calls), so 2 actors, a learner, a replay and an evaluator share 2 cores.
ROLES_PER_CPU = 4


class RayTransport:
    """distrl.transport's verbs over Ray actor handles and object refs, and what a role does where it runs
    apart from the others: sample ahead on threads, publish parameters ahead, bound a learner's call in
    time, send experience without waiting. How far ahead is the run's Ray section's (`ray` of its config):
    max_inflight_adds, publish_every."""

    # gone, restarting, not answering, or restarted and not yet handed its state by the driver; or its reply
    # lost with the host whose object store held it, or with the process that owned it (ObjectLostError)
    dead: tuple[type[BaseException], ...] = (RayActorError, GetTimeoutError, NotRestored, ObjectLostError)
    lost: tuple[type[BaseException], ...] = (*dead, ValueError)  # ... or a shard come back empty mid-sample
    # A learner's priority updates go to each shard once every this many steps: on the Pong profile (issue 34)
    # submitting one Ray call per shard per step took a quarter of the GPU learner's time.
    priority_batch = 4
    call_budget_s = LEARNER_CALL_S
    call = staticmethod(call)
    put = staticmethod(ray.put)
    idle = staticmethod(time.sleep)

    @staticmethod
    def gather(calls: list[Any], timeout: float | None = None) -> list[Any]:
        return ray.get(calls, timeout=timeout)

    @staticmethod
    def wait(calls: list[Any], timeout: float | None = None) -> list[Any]:
        """The calls that have finished: at least one, unless `timeout` seconds pass first."""
        ready = ray.wait(calls, num_returns=1, timeout=timeout)[0] if calls else []
        return ray.wait(calls, num_returns=len(calls), timeout=0)[0] if ready else []

    def __init__(self, section: Any = None):
        self.max_inflight_adds = int(getattr(section, "max_inflight_adds", 8))  # replay adds in flight before one waits
        self.publish_every = int(getattr(section, "publish_every", 10))  # learner updates between parameter puts

    def sink(self, replay: Any, compress: tuple[str, ...], codec: str = "zlib",
             shared: tuple[str, ...] = ()) -> BoundedSink:
        return BoundedSink(replay, type(self), self.max_inflight_adds, compress, codec, shared)

    @staticmethod
    def prefetch(sample: Callable[[], Any], depth: int, threads: int) -> Prefetcher:
        return Prefetcher(sample, max(1, depth), threads=threads)

    def publisher(self, latest: Callable[[], tuple[dict[str, torch.Tensor], int]]) -> Published:
        return Published(latest, self.publish_every)

    @staticmethod
    def device() -> str:
        """The GPU where Ray granted this role a share of one (it hides the GPUs it did not grant), else the CPU."""
        return "cuda" if torch.cuda.is_available() else "cpu"

    @staticmethod
    def restarted() -> bool:
        """Whether Ray started this actor again after its process died. Ray's property reads its own
        deprecated `actor_id` (Ray 2.60): without the filter every role printed Ray's warning in every run's log."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return cast(bool, ray.get_runtime_context().was_current_actor_reconstructed)


def hosted(cls: type, torch_threads: int, niceness: int | None = None) -> type:
    """`cls` as a role in a Ray actor of its own: torch gets `torch_threads` threads (0: one per core), the
    process runs at `niceness` (None: Ray's), and the roles it links to arrive as Ray actor names, looked up
    here. A handle given as a constructor argument would put the arguments in the object store, and Ray
    could not restart the actor once they were gone (ray-project/ray#53727); names are plain data that
    every restart gets again. The class keeps its name, so Ray's logs and actor table say which role it is."""

    def __init__(self: Any, parts: Any, index: int, links: dict[str, list[str]], transport: Any) -> None:
        if niceness is not None:
            renice(niceness, cls.__name__)
        torch.set_num_threads(torch_threads or os.cpu_count() or 1)
        links_by_name = {k: [named(n) for n in names] for k, names in links.items()}
        cls.__init__(self, parts, index, links_by_name, transport)  # type: ignore[misc]  # the class it wraps

    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": cls.__module__,
                                       "__doc__": cls.__doc__})


def renice(niceness: int, who: str) -> None:
    """Every thread of this process at `niceness`: Linux keeps one per thread, and Ray's worker has started
    its threads before the actor's constructor runs (Ray sets one niceness for all its workers, so no
    library call does this per actor)."""
    tasks = Path("/proc/self/task")
    try:
        for tid in [int(t.name) for t in tasks.iterdir()] if tasks.is_dir() else [0]:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            except ProcessLookupError:
                pass  # the thread has ended
    except PermissionError:
        raise ConfigError(f"ray.niceness: {who} may not run at niceness {niceness} (below Ray's "
                          f"{os.getpriority(os.PRIO_PROCESS, 0)} needs CAP_SYS_NICE): raise niceness only, "
                          "e.g. evaluator=19") from None


def named(name: str, timeout_s: float = 60.0) -> Any:
    """The handle of the run's actor `name`, once Ray has registered it (it is created just before)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return ray.get_actor(name)
        except ValueError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class RayPlacement:
    name = "ray"
    call_size = staticmethod(ray_call)

    def __init__(self, cfg: Any = None) -> None:
        self.cfg = cfg
        self.transport = RayTransport(getattr(cfg, "ray", None))
        self._classes: dict[tuple[type, int, int | None], Any] = {}
        self._run = uuid.uuid4().hex[:8]  # names unique to this run: several runs may share a cluster
        self._names: dict[int, str] = {}  # id() of each handle started -> its actor's name

    @staticmethod
    def check(roles: list[Role], cfg: Any = None) -> None:
        """Before anything starts: a role `nodes` does not know, a node address no live node has, or a GPU
        share for actors that cannot use it fails first."""
        check_gpu_shares(roles, cfg)
        for key, text in (("nodes", nodes_text(cfg)), ("ray.niceness", niceness_text(cfg))):
            unknown = sorted(set(by_role(text)) - {r.name for r in roles})
            if unknown:
                raise ConfigError(f"{key}={text!r} names {', '.join(unknown)}, not a role of {cfg.architecture} "
                                  f"(its roles: {', '.join(r.name for r in roles if r.count)})")
        nodes = role_nodes(cfg)
        for role in roles:
            node_affinity(nodes.get(role.name, ""))

    def start(self, role: Role, index: int, links: dict[str, list[Any]]) -> Any:
        """Instance `index` of `role` as a Ray actor, which receives the role's parts and no more."""
        options: dict[str, Any] = {"num_cpus": 1, **RESTART, **node_affinity(role_nodes(self.cfg).get(role.name, ""))}
        if role.threads > 1:
            options["max_concurrency"] = role.threads  # answers calls (params, checkpoint) while it runs one
        if share := gpu_share(role, self.cfg):
            options["num_gpus"] = share if share > 0 else float(ray.cluster_resources().get("GPU", 0) >= 1)
        cls = role.apart or role.cls  # here its callers run in processes of their own
        nice = role_niceness(self.cfg).get(role.name)
        key = (cls, role.torch_threads, nice)
        if key not in self._classes:
            self._classes[key] = ray.remote(hosted(cls, role.torch_threads, nice))
        name = options["name"] = f"distrl-{self._run}-{role.name}-{index}"
        names = {k: [self._names[id(h)] for h in handles] for k, handles in links.items()}
        handle = self._classes[key].options(**options).remote(role.parts, index, names, self.transport)
        self._names[id(handle)] = name
        return handle

    @staticmethod
    def restarts(handles: list[Any]) -> int | None:
        """The restarts Ray's actor table records for `handles`: exact even when a restarted worker dies
        again before it reports. Ray keeps that table behind a private API: where it is missing or
        moved, None, and the driver's own count (failed calls, new pids) stands."""
        try:
            from ray._private import state
            return sum(int(state.actors(h._actor_id.hex())["NumRestarts"]) for h in handles)
        except Exception:  # noqa: BLE001 - any failure of a private API means: keep our own count
            return None

    @staticmethod
    def stop(handles: list[Any]) -> None:
        for handle in handles:
            ray.kill(handle)


def nodes_text(cfg: Any) -> str:
    return getattr(cfg, "nodes", "") or ""


def niceness_text(cfg: Any) -> str:
    return getattr(getattr(cfg, "ray", None), "niceness", "") or ""


def role_nodes(cfg: Any) -> dict[str, str]:
    """The config's `nodes` (ROLE=IP pairs) by role."""
    return by_role(nodes_text(cfg))


def role_niceness(cfg: Any) -> dict[str, int]:
    """The config's `ray.niceness` (ROLE=N pairs) by role."""
    return {role: int(n) for role, n in by_role(niceness_text(cfg)).items()}


def by_role(text: str) -> dict[str, str]:
    """ROLE=VALUE pairs, comma-separated, by role."""
    return {role.strip(): value.strip() for role, _, value in (p.partition("=") for p in text.split(",") if p)}


def gpu_share(role: Role, cfg: Any) -> float:
    """The share of a GPU the role asks Ray for: ray.learner_gpus or ray.actor_gpus where the role can take
    that share (Role.gpu; -1: one GPU if the cluster has one), else none."""
    return float(getattr(getattr(cfg, "ray", None), f"{role.gpu}_gpus", 0.0)) if role.gpu else 0.0


def check_gpu_shares(roles: list[Role], cfg: Any) -> None:
    """ray.actor_gpus only where the actors can act on a GPU, and then with the learner's share given."""
    ray_cfg = getattr(cfg, "ray", None)
    actor_gpus = float(getattr(ray_cfg, "actor_gpus", 0.0))
    if actor_gpus <= 0:
        return
    if not any(r.gpu == "actor" and r.count for r in roles):
        raise ConfigError(f"ray.actor_gpus={actor_gpus:g}: {cfg.architecture}'s actors act on the CPU only "
                          "(Ape-X's and DQN's can use a GPU); set ray.actor_gpus=0")
    if getattr(ray_cfg, "learner_gpus", 0.0) < 0:
        raise ConfigError(f"ray.actor_gpus={actor_gpus:g} needs ray.learner_gpus set to the share the actors "
                          f"leave (e.g. {max(0.0, 1 - cfg.actors * actor_gpus):g} on one GPU): by default "
                          "the learner takes a whole GPU")


def node_affinity(node_ip: str) -> dict[str, Any]:
    """Soft node affinity: the role starts on the node at `node_ip`, and Ray restarts it on another
    node once that one is gone (the placement a cluster of CPU actor hosts wants)."""
    if not node_ip:
        return {}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    alive = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    if node_ip not in alive:
        raise ConfigError(f"nodes: no live node of this Ray cluster has the address {node_ip!r} "
                          f"(its nodes: {', '.join(sorted(alive))}); give one of those")
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(alive[node_ip], soft=True)}


@contextmanager
def ray_placement(cfg: Any, cpus: int) -> Iterator[RayPlacement]:
    """Join cfg.address (or start a local Ray for at least `cpus` CPUs) and shut down what was started."""
    started = connect(cfg.address, cpus)
    try:
        yield RayPlacement(cfg)
    finally:
        if started:
            ray.shutdown()


def check_room(processes: int, actors: int, cpus: int, per_cpu: int, where: str) -> None:
    """Refuse, before any role starts, more role processes than `cpus` hold at `per_cpu` each: a local
    Ray would start them all and thrash (100,000 actors once took 2 cores to load 82 and trained
    nothing), a cluster would leave the excess pending for ever."""
    room = cpus * per_cpu
    if processes <= room:
        return
    fits = room - (processes - actors)  # the other roles' processes stay whatever --actors is
    hold = f"{cpus} CPUs hold {room} role processes ({per_cpu} per CPU)" if per_cpu > 1 \
        else f"{cpus} CPUs hold {room} role processes (one each)"
    fix = f"use --actors {fits} or fewer" if fits >= 1 else "its other roles alone do not fit"
    raise ConfigError(f"--actors {actors} needs {processes} Ray processes (one per role instance), but {where}'s "
                      f"{hold}: {fix}, or join a larger cluster with --address")


def joins(cfg: Any) -> bool:
    """Whether the run joins a Ray it did not start: one already up in this process, or an address."""
    return ray.is_initialized() or bool(cfg.address or os.environ.get("RAY_ADDRESS"))


def check_this_machine(builder: Any) -> None:
    """The GPU shares, and a local Ray's room, asked before the run writes or starts anything (a joined
    cluster's room in run())."""
    cfg, roles = builder.cfg, builder.topology().roles
    check_gpu_shares(roles, cfg)
    if not joins(cfg):
        check_room(role_processes(roles), cfg.actors, len(os.sched_getaffinity(0)), ROLES_PER_CPU, "this machine")


def role_processes(roles: tuple[Role, ...]) -> int:
    return sum(role.count for role in roles)


def run(builder: Any, run_dir: Path, monitor: Monitor, resume: bool = False,
        hook: Callable[[dict[str, Any]], None] | None = None,
        saved: Callable[[], None] | None = None) -> dict[str, Any]:
    """Any architecture (its builder) on Ray, a CPU for each of its role instances. `resume` needs nothing
    here: the driver hands the stateful roles the run's newest checkpoint."""
    check_this_machine(builder)
    cfg, topology = builder.cfg, builder.topology()
    processes = role_processes(topology.roles)
    joined = joins(cfg)
    with ray_placement(cfg, processes) as placement:
        if joined:  # each role asks Ray for a whole CPU: the excess would wait for ever
            cpus = int(ray.cluster_resources().get("CPU", 0))
            check_room(processes, cfg.actors, cpus, 1, "the Ray cluster")
        return drive(cfg, topology, placement, run_dir, monitor, hook, saved)
