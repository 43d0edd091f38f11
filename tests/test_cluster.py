"""Three hosts on one machine that share no disk, as a real cluster's do (bench/hosts.py): a Ray head with
0 CPUs, where the driver runs and owns every file of the run, and two worker nodes with private disks. The
roles hand the driver their state (runtime/driver.py). Needs root for the namespaces: anywhere else the
tests are skipped, with the reason printed (pytest -ra)."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

import distrl
from bench.hosts import BIN, NET, host_files, kill_all, no_namespaces_reason, roles_in
from bench.hosts import cluster as hosts_cluster
from distrl import config as C
from distrl.architectures import make_architecture
from tests.cases import cases, names

pytest.importorskip("ray")

HOSTS = {"a": (f"{NET}.2", 4), "b": (f"{NET}.3", 5)}  # name: (address, CPUs); b holds every role once a is gone


def _cluster(root: Path):
    """The three hosts over `root`, or the test skipped with why (without root or namespaces)."""
    reason = no_namespaces_reason()
    if reason:
        pytest.skip(f"cluster test skipped: {reason}")
    return hosts_cluster(HOSTS, root)


@pytest.fixture
def cluster(tmp_path):
    with _cluster(tmp_path) as c:
        yield c


def _frames(run: Path) -> int:
    try:
        last = (run / "metrics.csv").read_text().strip().splitlines()[-1]
        return int(float(last.split(",")[1]))
    except (OSError, IndexError, ValueError):
        return 0


def _finish(driver: subprocess.Popen, timeout: float = 240) -> str:
    try:
        output, _ = driver.communicate(timeout=timeout)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, output[-3000:]
    return output


def _eval(run: Path) -> dict:
    """`distrl eval RUN` on the head's disk (the test's own, which the worker hosts do not see): its table's rows."""
    done = subprocess.run([str(BIN / "distrl"), "eval", str(run), "--episodes", "2"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "400"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = dict(re.findall(r"^\W*(\w+)\s+\W\s+(\S+)", done.stdout, re.MULTILINE))
    return {**rows, "episodes": int(rows["episodes"])}


@pytest.mark.learning(seconds=150)
@pytest.mark.alone
def test_the_learner_host_dies_and_the_run_resumes_on_the_other_host_from_the_drivers_checkpoint(tmp_path, cluster):
    """Host a holds the learner, the replay and the actors; it is killed outright mid-run. Ray starts them
    again on host b, the driver hands the learner and the replay their part of its newest checkpoint, and
    the run finishes. No file of the run is ever on a worker host; `distrl eval` on the head plays its
    checkpoint, and `--resume` from the head continues it on a fresh cluster."""
    run = tmp_path / "run"
    a_ip = HOSTS["a"][0]
    driver = cluster.distrl(
        "train", "apex", "--env", "CartPole-v1", "--runtime", "ray", "--address", cluster.address, "--actors", "2",
        "--max-frames", "14000", "--seed", "1", "--run-dir", str(run), "--quiet",
        "--set", f"nodes=actors={a_ip},learner={a_ip},replay={a_ip}",
        "--set", "replay.checkpoint=true", "--set", "checkpoint_every=200", "--set", "log_every_s=0.5",
        "--set", "eval_episodes=3")
    seen = {"moved": set()}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and driver.poll() is None:
        if "killed_at" not in seen and _frames(run) >= 5000 and list((run / "checkpoints").glob("ckpt-*.pt")):
            seen["placed"] = {cls: cluster.host_of(cls) for cls in ("LearnerWorker", "ReplayShard")}
            seen["actors_on_a"] = len(roles_in(cluster.hosts["a"], "ActorWorker"))
            seen["files_on_a"] = host_files(cluster.hosts["a"], tmp_path)
            kill_all(cluster.hosts["a"])  # the host is gone: raylet, object store, every role on it
            seen["killed_at"] = _frames(run)
        elif "killed_at" in seen:  # Ray starts them again on the host that is left
            seen["moved"] |= {cls for cls in ("LearnerWorker", "ReplayShard", "ActorWorker")
                              if roles_in(cluster.hosts["b"], cls)}
        time.sleep(0.25)
    output = _finish(driver)
    assert "killed_at" in seen, output[-3000:]
    assert seen["placed"] == {"LearnerWorker": "a", "ReplayShard": "a"} and seen["actors_on_a"] == 2
    assert seen["files_on_a"] == []  # nothing the roles did there was written to that host's disk
    assert host_files(cluster.hosts["b"], tmp_path) == []
    summary = json.loads((run / "summary.json").read_text())
    assert summary["frames"] >= 14000 and summary["faults"]["learner_restarts"] >= 1, summary
    assert summary["faults"]["actor_restarts"] >= 2 and summary["updates"] > 0
    restored = {r["role"]: r for r in summary["restores"]}
    learner, replay = restored["learner"], restored["replay"]
    assert learner["exact"] and "/checkpoints/ckpt-" in learner["checkpoint"], summary["restores"]
    assert learner["updates"] > 0 and learner["frames"] >= seen["killed_at"] - 2000
    assert replay["size"] > 0 and "/checkpoints/replay-" in replay["checkpoint"]  # the saved set came back
    assert seen["moved"] == {"LearnerWorker", "ReplayShard", "ActorWorker"}
    assert _eval(run)["episodes"] == 2

    cluster.down()  # a fresh cluster: nothing of the run survives but what the head's disk holds
    cluster.up()
    resumed = _finish(cluster.distrl("train", "apex", "--resume", str(run), "--address", cluster.address,
                                     "--max-frames", "16000", "--quiet", "--set", "nodes="))
    assert "resuming" in resumed and "replay: 1 shard(s) saved with it" in resumed
    after = json.loads((run / "summary.json").read_text())
    assert after["resumed_from"] and after["frames"] >= 16000 and after["updates"] > summary["updates"]
    assert host_files(cluster.hosts["b"], tmp_path) == []


SMALL = {"eval_episodes": 2, "log_every_s": 1}


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory):
    """One cluster for every architecture's run: bringing one up takes about 10 s."""
    with _cluster(tmp_path_factory.mktemp("cluster")) as c:
        yield c


def _role_classes(architecture: str) -> tuple[str, ...]:
    env, overrides = cases(architecture).cluster
    cfg = C.build_config(architecture, env, overrides={"runtime": "ray", **overrides})
    return tuple(sorted(role.cls.__name__ for role in make_architecture(cfg).topology().roles if role.count))


def cluster_params() -> list:
    """Every registered architecture; CI's tier runs the first of each set of role classes, the others (the
    same processes with other parts: DQN's, R2D2's, Ape-X DPG's are Ape-X's) run in `make test-all`."""
    seen: set[tuple[str, ...]] = set()
    params = []
    for architecture in names():
        classes = _role_classes(architecture)
        params.append(pytest.param(architecture, marks=pytest.mark.long) if classes in seen else architecture)
        seen.add(classes)
    return params


@pytest.mark.learning(seconds=30)
@pytest.mark.alone
@pytest.mark.parametrize("architecture", cluster_params())
def test_an_architecture_leaves_its_checkpoint_on_the_head_and_eval_plays_it(shared_cluster, architecture):
    """The architecture runs from the head with every role on the worker hosts; the checkpoint is on the
    head's disk, distrl.evaluate (`distrl eval`'s function) plays it there, and neither worker host holds a
    file of the run."""
    cluster = shared_cluster
    env, overrides = cases(architecture).cluster  # tests/cases/<package>.py: its cluster run
    flags = [f for k, v in {**overrides, **SMALL}.items()  # --actors: the preset is chosen for that count
             for f in ((f"--{k.replace('_', '-')}", str(v)) if k in ("actors", "max_frames") else ("--set", f"{k}={v}"))]
    run = cluster.root / architecture
    _finish(cluster.distrl("train", architecture, "--env", env, "--runtime", "ray", "--address", cluster.address,
                           "--seed", "1", "--run-dir", str(run), "--quiet", *flags))
    assert list((run / "checkpoints").glob("ckpt-*.pt")), architecture
    result = distrl.evaluate(run, episodes=2)  # what `distrl eval` calls, in this process on the head's disk
    assert result["episodes"] == 2 and "/checkpoints/ckpt-" in result["checkpoint"], (architecture, result)
    for ns in cluster.hosts.values():
        assert host_files(ns, cluster.root) == []
