"""DeviceStager: a GPU learner's batches joined into page-locked buffers and copied on the sample thread."""

import numpy as np
import pytest
import torch

from distrl.components.staging import DeviceStager
from distrl.replay import PrioritizedSampler, ReplayTable
from distrl.replay.sharded import ShardedReplay
from tests.fakes import NoParameters


def _client(shards=2, n=64):
    tables = [ReplayTable(100, PrioritizedSampler(0.6, 0.4), seed=i, compress=("obs",), codec="lz4") for i in range(shards)]
    client = ShardedReplay(tables, PrioritizedSampler(0.6, 0.4), seed=0)
    obs = np.random.default_rng(0).integers(0, 255, (n, 4, 8, 8), dtype=np.uint8)
    for i in range(0, n, 8):
        client.add({"obs": obs[i:i + 8], "id": np.arange(i, i + 8)})
    return client, obs


def test_on_a_cpu_learner_the_batch_is_the_replays_own():
    client, obs = _client()
    stager = DeviceStager("cpu", ("obs",))
    keys, batch, w = stager.sample(client, 32)
    assert isinstance(batch["obs"], np.ndarray) and keys.shape == (32, 2) and w.shape == (32,)
    np.testing.assert_array_equal(batch["obs"], obs[batch["id"]])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("shards", [1, 2])
def test_on_a_gpu_the_frames_arrive_as_device_tensors_equal_to_the_samples(shards):
    client, obs = _client(shards)
    stager = DeviceStager("cuda", ("obs",))
    for _ in range(3):  # the thread's buffers are reused from the second batch on
        keys, batch, w = stager.sample(client, 32)
        assert batch["obs"].is_cuda and batch["obs"].dtype == torch.uint8
        assert isinstance(batch["id"], np.ndarray)
        np.testing.assert_array_equal(batch["obs"].cpu().numpy(), obs[batch["id"]])


def test_actor_gpus_is_refused_where_the_actors_cannot_use_it_or_the_learner_would_take_the_whole_gpu():
    from distrl.architectures import make_architecture
    from distrl.config import build_config
    from distrl.errors import ConfigError
    from distrl.runtime.ray.placement import check_this_machine, gpu_share

    cfg = build_config("apex-dpg", "Pendulum-v1", overrides={"ray.actor_gpus": "0.05"})
    with pytest.raises(ConfigError, match="apex-dpg's actors act on the CPU only"):
        check_this_machine(make_architecture(cfg))
    cfg = build_config("r2d2", "CartPole-v1", overrides={"ray.actor_gpus": "0.05"})
    with pytest.raises(ConfigError, match="r2d2's actors act on the CPU only"):
        check_this_machine(make_architecture(cfg))
    cfg = build_config("apex", "CartPole-v1", overrides={"ray.actor_gpus": "0.05", "actors": 4})
    with pytest.raises(ConfigError, match="needs ray.learner_gpus set to the share the actors leave \\(e.g. 0.8 on one GPU\\)"):
        check_this_machine(make_architecture(cfg))
    # given both, each role asks Ray for its own share; the replay and the evaluator for none
    cfg = build_config("apex", "CartPole-v1", overrides={"ray.actor_gpus": "0.05", "ray.learner_gpus": "0.5"})
    shares = {role.name: gpu_share(role, cfg) for role in make_architecture(cfg).topology().roles}
    assert shares == {"actors": 0.05, "learner": 0.5, "replay": 0.0, "evaluator": 0.0}


def test_an_actor_placed_on_a_device_acts_as_on_the_cpu():
    """Actor.place: the forward pass runs on the given device; the Q-values (and so actions and priorities)
    are the same numbers as on the CPU. On a machine without CUDA the device is the CPU itself."""
    from distrl.components.actor import Actor
    from distrl.envs import make_env
    from distrl.nets import make_q_network

    net = make_q_network((4,), 2, dueling=True, hidden=(16,))
    actor = Actor(lambda j: make_env("CartPole-v1", seed=j), net, [0.0, 0.0], sink=None, source=NoParameters(),
                  n_step=3, gamma=0.99, flush_size=50, pull_every=400)
    before = actor._q_values(actor.obs)
    actor.place("cuda" if torch.cuda.is_available() else "cpu")
    np.testing.assert_allclose(actor._q_values(actor.obs), before, rtol=1e-5, atol=1e-6)
