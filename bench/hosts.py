"""Hosts that share no disk, on one machine, for tests/test_cluster.py and bench/cluster_scale.py: network
namespaces on one bridge, a Ray head with 0 CPUs (so no role can hide on the driver's host) and Ray worker
nodes, each in a mount namespace of its own with a private tmpfs over the run's root, /tmp/ray and /dev/shm,
so a file a role wrote there would be seen on that host alone. Needs root, iproute2 and util-linux."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NET = "10.213.48"
HEAD_IP = f"{NET}.1"
PORT = 6391
BIN = Path(sys.executable).parent
PRIVATE = ("/tmp/ray", "/dev/shm")  # besides the run's root: each worker host's own Ray session and object store


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def no_namespaces_reason() -> str | None:
    """Why this machine cannot make such hosts, or None."""
    if shutil.which("ip") is None or shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return "needs iproute2's `ip` and util-linux's unshare and nsenter"
    if os.geteuid() != 0:
        return "needs root to create network and mount namespaces (run the suite as root)"
    probe = f"distrl-probe-{os.getpid()}"
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"this machine refuses network namespaces ({made.stderr.strip()})"
    ip("netns", "del", probe, check=False)
    mount = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", "/mnt"],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        return f"this machine refuses mount namespaces ({mount.stderr.strip()})"
    return None


def pids(ns: str) -> list[int]:
    return [int(p) for p in ip("netns", "pids", ns, check=False).stdout.split()]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def roles_in(ns: str, cls: str) -> list[int]:
    """The processes of host `ns` that run a role of class `cls` (Ray titles them ray::CLASS)."""
    return [p for p in pids(ns) if cls in cmdline(p)]


def kill_all(ns: str) -> None:
    """Every process of host `ns`, SIGKILLed: the host is gone."""
    for _ in range(20):  # processes may fork while we kill; repeat until the namespace is empty
        found = pids(ns)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def host_files(ns: str, root: Path) -> list[str]:
    """Every file under `root` as the host `ns` sees it (inside its own mount namespace)."""
    for pid in pids(ns):
        found = subprocess.run(["nsenter", "-t", str(pid), "-m", "find", str(root), "-type", "f"],
                               capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split()
    raise AssertionError(f"no process of host {ns} to look through")


class Cluster:
    """A head (the driver's host, 0 CPUs) and worker hosts {name: (address, CPUs)} with private disks over `root`."""

    def __init__(self, hosts: dict[str, tuple[str, int]], root: Path, tag: str | None = None):
        self.tag = tag or uuid.uuid4().hex[:6]
        self.specs, self.root = hosts, root
        self.head = f"d3-head-{self.tag}"
        self.hosts = {name: f"d3-{name}-{self.tag}" for name in hosts}
        self.address = f"{HEAD_IP}:{PORT}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        # The head notices a dead node after ~3 missed 0.5 s health checks instead of the default ~30 s.
        # One token for the cluster's every process (head, worker nodes, driver), as on a real cluster.
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=uuid.uuid4().hex + uuid.uuid4().hex)
        env.update(RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="3",
                   RAY_health_check_timeout_ms="1000", RAY_USAGE_STATS_ENABLED="0")
        self.env = env

    def up(self) -> None:
        bridge = f"br{self.tag}"
        for ns in (self.head, *self.hosts.values()):
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", self.head, "link", "add", bridge, "type", "bridge")
        ip("-n", self.head, "addr", "add", f"{HEAD_IP}/24", "dev", bridge)
        ip("-n", self.head, "link", "set", bridge, "up")
        for name, (address, _) in self.specs.items():
            outer, inner = f"v{name}o{self.tag}", f"v{name}i{self.tag}"
            ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            ip("link", "set", outer, "netns", self.head)
            ip("link", "set", inner, "netns", self.hosts[name])
            ip("-n", self.head, "link", "set", outer, "master", bridge, "up")
            ip("-n", self.hosts[name], "addr", "add", f"{address}/24", "dev", inner)
            ip("-n", self.hosts[name], "link", "set", inner, "up")
        common = ["--disable-usage-stats", "--object-store-memory", str(150 * 2**20)]
        subprocess.run(["ip", "netns", "exec", self.head, str(BIN / "ray"), "start", "--head", "--node-ip-address",
                        HEAD_IP, "--port", str(PORT), "--num-cpus", "0", "--include-dashboard", "false",
                        "--temp-dir", f"/tmp/distrl-3h-{self.tag}", *common],
                       env=self.env, check=True, capture_output=True, timeout=120)
        for name, (address, cpus) in self.specs.items():
            mounts = " && ".join(f"mkdir -p {d} && mount -t tmpfs tmpfs {d}" for d in (str(self.root), *PRIVATE))
            start = (f"exec {BIN / 'ray'} start --address {self.address} --node-ip-address {address} "
                     f"--num-cpus {cpus} " + " ".join(common))
            subprocess.run(["ip", "netns", "exec", self.hosts[name], "unshare", "--mount", "--propagation", "private",
                            "sh", "-c", f"{mounts} && {start}"], env=self.env, check=True, capture_output=True,
                           timeout=120)

    def down(self) -> None:
        for ns in (*self.hosts.values(), self.head):
            kill_all(ns)
            ip("netns", "del", ns, check=False)  # takes the veth pairs and the bridge with it
        shutil.rmtree(f"/tmp/distrl-3h-{self.tag}", ignore_errors=True)

    def distrl(self, *args: str) -> subprocess.Popen:
        """`distrl ARGS` on the head, as a user runs it there."""
        return subprocess.Popen(["ip", "netns", "exec", self.head, str(BIN / "distrl"), *args], env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def host_of(self, cls: str) -> str:
        """The worker host a role class runs on."""
        on = [name for name, ns in self.hosts.items() if roles_in(ns, cls)]
        assert len(on) == 1, f"{cls} on hosts {on}"
        return on[0]


@contextmanager
def cluster(hosts: dict[str, tuple[str, int]], root: Path) -> Iterator[Cluster]:
    c = Cluster(hosts, root)
    try:
        c.up()
        yield c
    finally:
        c.down()
