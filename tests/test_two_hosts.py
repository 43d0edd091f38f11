"""Two hosts on one machine: two network namespaces joined by a veth pair in a private /30, a Ray head
in one and a Ray worker node in the other. Ape-X runs from the head with its actors on the worker
node (ray.actor_node); the worker node is then killed outright (every process in its namespace),
Ray restarts the actors on the head, and the run finishes. Needs root for the namespaces: anywhere
else the test is skipped, with the reason printed (pytest -ra)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("ray")

HEAD_IP, NODE_IP = "10.213.47.1", "10.213.47.2"  # a /30: exactly these two hosts
PORT = 6390
BIN = Path(sys.executable).parent


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def _no_namespaces_reason() -> str | None:
    if shutil.which("ip") is None:
        return "needs iproute2's `ip` to create network namespaces"
    if os.geteuid() != 0:
        return "needs root to create network namespaces and a veth pair (run the suite as root)"
    probe = f"distrl-probe-{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"this machine refuses network namespaces ({made.stderr.strip()})"
    _ip("netns", "del", probe, check=False)
    return None


def _pids(ns: str) -> list[int]:
    out = _ip("netns", "pids", ns, check=False).stdout.split()
    return [int(p) for p in out]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _actors_in(ns: str) -> int:
    return sum("ActorWorker" in _cmdline(p) for p in _pids(ns))


def _kill_all(ns: str) -> None:
    for _ in range(20):  # processes may fork while we kill; repeat until the namespace is empty
        pids = _pids(ns)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


@pytest.fixture
def two_hosts(tmp_path):
    reason = _no_namespaces_reason()
    if reason:
        pytest.skip(f"two-host test skipped: {reason}")
    tag = uuid.uuid4().hex[:6]
    temp_dir = f"/tmp/distrl-2h-{tag}"  # short: Ray's unix sockets live under it (108-byte path limit)
    head, node = f"distrl-head-{tag}", f"distrl-node-{tag}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    # The head notices a dead node after ~3 missed 0.5 s health checks instead of the default ~30 s.
    # One token for the cluster's every process (head, worker node, driver), as on a real cluster.
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=uuid.uuid4().hex + uuid.uuid4().hex)
    env.update(RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="3",
               RAY_health_check_timeout_ms="1000", RAY_USAGE_STATS_ENABLED="0")
    try:
        _ip("netns", "add", head)
        _ip("netns", "add", node)
        _ip("link", "add", f"vh{tag}", "type", "veth", "peer", "name", f"vn{tag}")
        for ns, dev, addr in ((head, f"vh{tag}", HEAD_IP), (node, f"vn{tag}", NODE_IP)):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        common = ["--disable-usage-stats", "--object-store-memory", str(200 * 2**20)]
        subprocess.run(["ip", "netns", "exec", head, str(BIN / "ray"), "start", "--head", "--node-ip-address",
                        HEAD_IP, "--port", str(PORT), "--num-cpus", "5", "--include-dashboard", "false",
                        "--temp-dir", temp_dir, *common],
                       env=env, check=True, capture_output=True, timeout=120)
        subprocess.run(["ip", "netns", "exec", node, str(BIN / "ray"), "start", "--address", f"{HEAD_IP}:{PORT}",
                        "--node-ip-address", NODE_IP, "--num-cpus", "2", *common],
                       env=env, check=True, capture_output=True, timeout=120)
        yield {"head": head, "node": node, "env": env}
    finally:
        for ns in (node, head):
            _kill_all(ns)
            _ip("netns", "del", ns, check=False)  # takes the veth pair with it
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.learning
@pytest.mark.alone
def test_actors_on_a_worker_node_move_to_the_head_when_it_dies(tmp_path, two_hosts):
    run = tmp_path / "run"
    frames = 12_000
    driver = subprocess.Popen(
        ["ip", "netns", "exec", two_hosts["head"], str(BIN / "distrl"), "train", "apex", "--env", "CartPole-v1",
         "--runtime", "ray", "--address", f"{HEAD_IP}:{PORT}", "--actors", "2", "--max-frames", str(frames),
         "--seed", "1", "--run-dir", str(run), "--quiet", "--set", f"ray.actor_node={NODE_IP}",
         "--set", "log_every_s=0.5", "--set", "eval_episodes=3"],
        env=two_hosts["env"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = {"on_node": 0, "on_head_after": 0}
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and driver.poll() is None:
            progress = _frames(run)
            seen["on_node"] = max(seen["on_node"], _actors_in(two_hosts["node"]))
            if "killed_at" not in seen and progress >= 4000:
                assert seen["on_node"] == 2, "the actors were not placed on the worker node"
                assert _actors_in(two_hosts["head"]) == 0
                _kill_all(two_hosts["node"])  # the worker host is gone: raylet, object store, actors
                seen["killed_at"] = progress
            elif "killed_at" in seen:
                seen["on_head_after"] = max(seen["on_head_after"], _actors_in(two_hosts["head"]))
            time.sleep(0.25)
        output, _ = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, output[-3000:]
    assert "killed_at" in seen, output[-3000:]
    assert seen["on_head_after"] == 2  # Ray restarted both actors on the head
    summary = json.loads((run / "summary.json").read_text())
    assert summary["frames"] >= frames and summary["faults"]["actor_restarts"] == 2, summary
    assert summary["updates"] > 0 and summary["eval_episodes"] == 3


def _frames(run: Path) -> int:
    try:
        last = (run / "metrics.csv").read_text().strip().splitlines()[-1]
        return int(float(last.split(",")[1]))
    except (OSError, IndexError, ValueError):
        return 0
