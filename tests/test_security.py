"""Security defaults of a local Ray that distrl starts: no dashboard, and a per-run token that every
port Ray opens demands (Ray 2.60 binds its gRPC servers to every interface whatever node address it
is given, so loopback-only is not on offer; docs/reliability.md shows the `ss -ltn` listing)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("ray")

OWNER = """
import sys, time
from distrl.runtime import protect_local_ray
assert protect_local_ray("")  # what `distrl train --runtime ray` does before importing Ray
import ray
from distrl.runtime.ray import connect
connect("", 1)
print(ray.get_runtime_context().gcs_address, flush=True)
import urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:8265", timeout=2)
    print("dashboard: up", flush=True)
except OSError:
    print("dashboard: off", flush=True)
time.sleep(120)
"""

OUTSIDER = "import sys, ray; ray.init(address=sys.argv[1], logging_level='ERROR'); print('JOINED')"


def test_a_process_without_the_runs_token_cannot_join_its_ray():
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    owner = subprocess.Popen([sys.executable, "-c", OWNER], env=env, stdout=subprocess.PIPE, text=True)
    try:
        address = owner.stdout.readline().strip()
        assert address.rpartition(":")[2].isdigit(), address
        assert owner.stdout.readline().strip() == "dashboard: off"
        # Ray retries a refused connection once a second, 20 times by default: 2 tries show the refusal in 2 s
        outsider = subprocess.run([sys.executable, "-c", OUTSIDER, address], env={**env, "RAY_NUM_REDIS_GET_RETRIES": "2"},
                                  capture_output=True, text=True, timeout=180)
    finally:
        owner.kill()
        owner.wait()
    assert outsider.returncode != 0 and "JOINED" not in outsider.stdout
    assert "token" in outsider.stderr.lower()  # refused for want of the token, not for a typo


@pytest.mark.parametrize("mode", ["token", ""])
def test_joining_a_cluster_without_token_authentication_warns_in_one_line(monkeypatch, capsys, mode):
    """A cluster a user started with `ray start` runs open to its network unless started with a token:
    distrl says so when it joins one without (the joining process sees the mode its cluster needs)."""
    from distrl.runtime.ray import cluster
    monkeypatch.setattr(cluster.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(cluster.ray, "init", lambda **kwargs: None)
    monkeypatch.setattr(cluster, "check_reachable", lambda address: None)
    monkeypatch.setenv("RAY_AUTH_MODE", mode)
    assert cluster.connect("10.0.0.5:6379", 1)
    err = capsys.readouterr().err.strip().splitlines()
    if mode == "token":
        assert err == []
    else:
        assert len(err) == 1 and "joined the Ray cluster at 10.0.0.5:6379 without token authentication" in err[0]
