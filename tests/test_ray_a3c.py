"""The A3C family on the ray runtime: workers attach the driver's shared memory by name (or use
shard actors), and a killed worker is restarted without stopping the run."""

import os
import signal

import pytest

ray = pytest.importorskip("ray")

from distrl import config as C  # noqa: E402
from distrl.training import train  # noqa: E402

pytestmark = pytest.mark.usefixtures("local_ray")


def cfg_for(tmp_path, frames, **extra):
    return C.build_config("a3c", "CartPole-v1", overrides={
        "runtime": "ray", "actors": 2, "max_frames": frames, "seed": 1, "eval_episodes": 2, "log_every_s": 0.3,
        "checkpoint_every": 100, "run_dir": str(tmp_path / "run"), **extra})


@pytest.mark.parametrize("store", ["shared", "sharded"])
def test_ray_workers_update_one_store(tmp_path, store, monkeypatch):
    from distrl.params.shared_memory import SharedMemoryParams
    made, create = [], SharedMemoryParams.create.__func__

    def recording_create(cls, *args, **kwargs):  # this run's segments: another test may make its own meanwhile
        store = create(cls, *args, **kwargs)
        made.extend(name for key, name in store.spec().items() if key in ("params", "stats", "counters") and name)
        return store

    monkeypatch.setattr(SharedMemoryParams, "create", classmethod(recording_create))
    summary = train(cfg_for(tmp_path, 4000, **{"ps.store": store, "ps.shards": 2}), live=False)
    assert summary["runtime"] == "ray" and summary["frames"] >= 4000 and summary["updates"] >= 4000 // 5
    # one driver: the same faults on both stores (no shard restarts where the store is shared memory)
    assert summary["faults"] == {"worker_restarts": 0, "ps_restarts": 0, "ps_waits": 0} and summary["eval_episodes"] == 2
    assert list((tmp_path / "run" / "checkpoints").glob("ckpt-*.pt"))
    assert bool(made) == (store == "shared")
    assert not set(made) & set(os.listdir("/dev/shm"))  # the driver freed its shared-memory segments


def test_killed_worker_is_restarted_and_reattaches(tmp_path, train_with_hook):
    seen = {}

    def hook(state):
        if not seen and state["totals"].get("frames", 0) > 1500:
            os.kill(ray.get(state["workers"][0].pid.remote()), signal.SIGKILL)
            seen["at"] = state["totals"]["frames"]

    from distrl.runtime import ray as ray_runtime
    summary = train_with_hook(ray_runtime, cfg_for(tmp_path, 6000), hook)
    assert seen and summary["faults"]["worker_restarts"] >= 1 and summary["frames"] >= 6000
