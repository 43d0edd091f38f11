"""A remote learner's call is bounded in time, not only in updates: at batch 512 on a CPU a call of 50 Atari
updates took ~2 minutes, and the run's progress, checkpoints and stop waited for it. In one process a call
makes exactly its n updates (the inline replay ratio, and determinism, depend on it)."""

import time
from types import SimpleNamespace

import torch

from distrl.components.workers import LearnerWorker
from distrl.runtime.ray.placement import LEARNER_CALL_S, RayTransport
from distrl.transport import InProcess


class RemoteInProcess(InProcess):
    """The Ray transport's learner path (a prefetching thread, the call's time bound), without Ray."""

    call_budget_s = RayTransport.call_budget_s
    prefetch = staticmethod(RayTransport.prefetch)


class SlowLearner:
    """Each update takes 0.2 s: 50 of them would take 10 s."""

    device = torch.device("cpu")

    def __init__(self):
        self.updates = 0

    def latest(self):
        return {"w": torch.zeros(1)}, self.updates

    def counters(self):
        return {"updates": self.updates}

    def step(self, batch, weights):
        assert batch == "batch"
        time.sleep(0.2)
        self.updates += 1
        return {}, None


class SlowReplay:
    def client(self, shards, transport):
        return SimpleNamespace(can_sample=lambda n: True, sample=lambda n: ("keys", "batch", "weights"),
                               update_priorities=lambda keys, priorities: None)


def slow_parts():
    return SimpleNamespace(replay=SlowReplay(), make_learner=lambda device: SlowLearner(), batch_size=2, prefetch=1,
                           prefetch_threads=1, trim_every=100, image_fields=())


def test_a_remote_learner_call_returns_after_its_time_bound_and_an_inline_one_makes_every_update():
    remote = LearnerWorker(slow_parts(), 0, {"replay": []}, RemoteInProcess())
    remote.run(50)  # the first call finds the replay ready and trains
    # 1 s at 0.2 s an update: about 5, and far fewer than the 50 asked
    assert 1 <= remote.updates <= 15, remote.updates
    assert LEARNER_CALL_S == 1.0
    remote.finish()  # stops its prefetching thread

    inline = LearnerWorker(slow_parts(), 0, {"replay": []}, InProcess())
    inline.run(7)  # 1.4 s, past the bound: in one process the bound does not apply
    assert inline.updates == 7


def test_asking_ray_whether_a_role_restarted_prints_no_deprecation_warning(monkeypatch):
    """Ray's was_current_actor_reconstructed reads its own deprecated actor_id; a role asks at every start."""
    import warnings

    import ray

    class Context:
        @property
        def was_current_actor_reconstructed(self):
            warnings.warn("Use get_actor_id() instead", DeprecationWarning, stacklevel=2)
            return True

    monkeypatch.setattr(ray, "get_runtime_context", Context)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RayTransport.restarted() is True
