"""Sharded parameter server: slicing, per-shard optimizers equal to one optimizer on the whole
vector, Gorila's stale-gradient drop, the global update count, checkpoints, and real Ray shards."""

import numpy as np
import pytest
import torch

from distrl.algos.rmsprop import RMSProp
from distrl.errors import CheckpointError, ConfigError
from distrl.params.param_server import (
    ParamShard,
    ShardedParameterServer,
    flat_grad,
    flatten,
    local_shards,
    shard_slices,
    unflatten_into,
)

X0 = np.array([1.0, -2.0, 0.5, 3.0, 0.0, -1.0, 2.0], dtype=np.float32)
GRADS = [np.array(g, dtype=np.float32) for g in ([0.5, -1.0, 2.0, 0.1, -0.3, 1.0, 0.0],
                                                 [1.0, 1.0, -1.0, 0.2, 0.3, -2.0, 0.5],
                                                 [-0.5, 2.0, 0.0, 0.4, 0.1, 1.0, -1.0])]


def _sizes(n, k):
    return [s.stop - s.start for s in shard_slices(n, k)]


@pytest.mark.parametrize("n,k,sizes", [(10, 3, [4, 3, 3]), (10, 1, [10]), (7, 7, [1] * 7), (11, 4, [3, 3, 3, 2])])
def test_shard_slices_cover_every_parameter_once(n, k, sizes):
    assert _sizes(n, k) == sizes
    covered = np.concatenate([np.arange(n)[s] for s in shard_slices(n, k)])
    assert covered.tolist() == list(range(n))


@pytest.mark.parametrize("k", [0, -1, 11])
def test_bad_shard_count_is_a_config_error(k):
    with pytest.raises(ConfigError, match="between 1 and 10"):
        shard_slices(10, k)


def test_one_adagrad_step_by_hand():
    shard = ParamShard(np.array([1.0, 2.0, 3.0], dtype=np.float32), lr=0.1)
    assert shard.push(np.array([0.5, -1.0, 2.0], dtype=np.float32), 0)
    # accumulator = g^2 (initial 0), x - lr * g / (sqrt(g^2) + eps) = x - lr * sign(g)
    np.testing.assert_allclose(shard.pull()[0], [0.9, 2.1, 2.9], rtol=1e-6)
    assert shard.push(np.array([1.5, 0.0, 0.0], dtype=np.float32), 1)
    # second step, first element: accumulator 0.25 + 2.25 = 2.5, step 0.1 * 1.5 / sqrt(2.5)
    np.testing.assert_allclose(shard.pull()[0], [0.9 - 0.15 / np.sqrt(2.5), 2.1, 2.9], rtol=1e-6)


@pytest.mark.parametrize("optimizer,kwargs", [("adagrad", {}), ("rmsprop", {"decay": 0.99, "eps": 0.1}),
                                              ("adam", {"betas": (0.9, 0.99)}), ("sgd", {"momentum": 0.9})])
def test_sharded_updates_equal_one_optimizer_on_the_whole_vector(optimizer, kwargs):
    ps = ShardedParameterServer(local_shards(X0, 3, optimizer=optimizer, lr=0.05, **kwargs))
    assert [s.stop - s.start for s in ps.slices] == [3, 2, 2]
    whole = torch.tensor(X0, requires_grad=True)
    opt = {"adagrad": torch.optim.Adagrad, "rmsprop": RMSProp, "adam": torch.optim.Adam,
           "sgd": torch.optim.SGD}[optimizer]([whole], lr=0.05, **kwargs)
    for g in GRADS:
        _, versions = ps.pull()
        assert ps.push(g, versions).all()
        whole.grad = torch.tensor(g)
        opt.step()
    values, versions = ps.pull()
    np.testing.assert_allclose(values, whole.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert versions.tolist() == [3, 3, 3] and ps.updates() == 3


def test_stale_gradient_is_dropped_and_counted():
    shard = ParamShard(np.zeros(2, dtype=np.float32), optimizer="sgd", lr=1.0, staleness_bound=1)
    _, old = shard.pull()                                   # learner A computes on version 0
    assert shard.push(np.array([1.0, 0.0], dtype=np.float32), 0)   # learner B, fresh
    assert shard.push(np.array([0.0, 1.0], dtype=np.float32), 1)   # learner C, fresh
    before = shard.pull()[0]
    assert not shard.push(np.array([5.0, 5.0], dtype=np.float32), old)  # lag 2 > 1
    np.testing.assert_array_equal(shard.pull()[0], before)
    assert shard.counters() == {"version": 2, "applied": 2, "dropped_stale": 1}
    assert shard.push(np.array([1.0, 1.0], dtype=np.float32), 1)        # lag 1 <= 1: applied
    np.testing.assert_array_equal(shard.pull()[0], [-2.0, -2.0])
    assert shard.counters() == {"version": 3, "applied": 3, "dropped_stale": 1}


def test_no_bound_never_drops():
    shard = ParamShard(np.zeros(1, dtype=np.float32), optimizer="sgd", lr=1.0)
    for _ in range(5):
        shard.push(np.ones(1, dtype=np.float32), 0)
    assert shard.counters() == {"version": 5, "applied": 5, "dropped_stale": 0}


def test_annealed_learning_rate_falls_linearly_to_zero():
    """lr 1, anneal over 4 versions: SGD steps of 1, 0.75, 0.5, 0.25, then 0 for every later push."""
    shard = ParamShard(np.zeros(1, dtype=np.float32), optimizer="sgd", lr=1.0, anneal_updates=4)
    values = [shard.push_pull(np.ones(1, dtype=np.float32), shard.version)[0][0] for _ in range(6)]
    np.testing.assert_allclose(values, [-1.0, -1.75, -2.25, -2.5, -2.5, -2.5])
    with pytest.raises(ConfigError, match="anneal_updates 0"):
        ParamShard(np.zeros(1), anneal_updates=0)


def test_ba3c_anneals_over_the_rounds_its_frames_make():
    """ba3c-cartpole: 200k frames / (2 workers (0.9 of 2) x bs 32) = 3,125 rounds."""
    from distrl import config as C
    from distrl.architectures.ba3c.builder import BA3C
    cfg = C.build_config("ba3c", "CartPole-v1")
    assert BA3C(cfg).shards().shard_args(0)[1]["anneal_updates"] == 3125
    async_cfg = C.build_config("ba3c", "CartPole-v1", overrides={"sync.mode": "async", "max_frames": 6400})
    assert BA3C(async_cfg).shards().shard_args(1)[1]["anneal_updates"] == 200
    unannealed = BA3C(C.build_config("ba3c", "CartPole-v1", overrides={"learner.anneal": False}))
    assert "anneal_updates" not in unannealed.shards().shard_args(0)[1]


def test_gorila_anneals_over_the_global_updates_its_frames_make():
    """gorila-cartpole: each bundle makes 2 updates per 4 agent steps, so 160k frames give 80,000."""
    from distrl import config as C
    from distrl.architectures.gorila.builder import Gorila
    cfg = C.build_config("gorila", "CartPole-v1", overrides={"max_frames": 160_000, "learner.anneal": True})
    assert Gorila(cfg).shards().shard_args(1)[1]["anneal_updates"] == 80_000
    assert "anneal_updates" not in Gorila(C.build_config("gorila", "CartPole-v1")).shards().shard_args(0)[1]


def test_updates_is_the_global_count_across_shards():
    shards = local_shards(X0, 3, optimizer="sgd", lr=0.1, staleness_bound=0)
    ps = ShardedParameterServer(shards)
    _, a_versions = ps.pull()                               # learner A
    _, b_versions = ps.pull()                               # learner B
    assert ps.push(GRADS[0], b_versions).all() and ps.updates() == 1
    assert not ps.push(GRADS[1], a_versions).any()          # stale on every shard
    assert ps.updates() == 1
    shards[0].push(np.zeros(3, dtype=np.float32), 1)        # only shard 0 moves on
    assert ps.pull()[1].tolist() == [2, 1, 1] and ps.updates() == 1
    assert ps.counters() == {"version": 1, "max_version": 2, "applied": 4, "dropped_stale": 3}
    _, versions = ps.pull()
    assert ps.push(GRADS[2], versions).all() and ps.updates() == 2


def test_pull_push_round_trip_and_shape_errors():
    ps = ShardedParameterServer(local_shards(X0, 3, optimizer="sgd", lr=0.5))
    values, versions = ps.pull()
    np.testing.assert_array_equal(values, X0)
    values[:] = 99.0                                        # a pull is a copy
    np.testing.assert_array_equal(ps.pull()[0], X0)
    ps.push(GRADS[0], versions)
    np.testing.assert_allclose(ps.pull()[0], X0 - 0.5 * GRADS[0])
    with pytest.raises(ValueError, match="7 values and 3 versions"):
        ps.push(np.zeros(6, dtype=np.float32), versions)
    with pytest.raises(ValueError, match=r"expected \(3,\), got 4 elements"):
        ps.shards[0].push(np.zeros(4, dtype=np.float32), 0)
    with pytest.raises(ConfigError, match="adagrad"):
        ParamShard(X0, optimizer="lbfgs")


@pytest.mark.parametrize("optimizer", ["adagrad", "adam"])
def test_checkpoint_round_trip_with_weights_only(tmp_path, optimizer):
    ps = ShardedParameterServer(local_shards(X0, 3, optimizer=optimizer, lr=0.05, staleness_bound=0))
    for g in GRADS[:2]:
        ps.push(g, ps.pull()[1])
    ps.push(GRADS[2], [0, 0, 0])                            # dropped: counters must survive too
    torch.save(ps.state_dict(), tmp_path / "ps.pt")
    other = ShardedParameterServer(local_shards(np.zeros(7), 3, optimizer=optimizer, lr=0.05, staleness_bound=0))
    other.load_state_dict(torch.load(tmp_path / "ps.pt", weights_only=True))
    for a, b in zip(ps.pull(), other.pull()):
        np.testing.assert_array_equal(a, b)
    assert other.counters() == ps.counters()
    for server in (ps, other):                              # optimizer state restored: same next update
        server.push(GRADS[2], server.pull()[1])
    np.testing.assert_array_equal(ps.pull()[0], other.pull()[0])


def test_mismatched_checkpoint_is_refused():
    states = ShardedParameterServer(local_shards(X0, 3)).state_dict()
    with pytest.raises(CheckpointError, match="same number of shards"):
        ShardedParameterServer(local_shards(X0, 2)).load_state_dict(states[:2] + states[:1] + states[:1])
    with pytest.raises(CheckpointError, match="same network"):
        ShardedParameterServer(local_shards(X0, 3, optimizer="adam")).load_state_dict(states)
    with pytest.raises(CheckpointError, match="same network"):
        ParamShard(np.zeros(5)).load_state_dict(states[0])


def test_flatten_unflatten_and_flat_grad():
    net = torch.nn.Linear(3, 2)
    flat = flatten(net)
    assert flat.shape == (8,) and flat.dtype == np.float32
    new = np.arange(8, dtype=np.float32)
    unflatten_into(net, new)
    new[:] = -1.0                                           # the module keeps its own copy
    np.testing.assert_array_equal(net.weight.detach().numpy(), [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(net.bias.detach().numpy(), [6, 7])
    np.testing.assert_array_equal(flat_grad(net), np.zeros(8))
    net(torch.ones(1, 3)).sum().backward()
    np.testing.assert_array_equal(flat_grad(net), [1, 1, 1, 1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="7 values, the module expects 8"):
        unflatten_into(net, np.zeros(7))


def test_ray_actor_shards_give_the_same_numbers_as_local(local_ray):
    ray = local_ray
    actor = ray.remote(ParamShard).options(num_cpus=1)
    remote = ShardedParameterServer([actor.remote(X0[s], lr=0.05) for s in shard_slices(7, 2)],
                                    call=lambda h, m, *a: getattr(h, m).remote(*a), gather=ray.get)
    local = ShardedParameterServer(local_shards(X0, 2, lr=0.05))
    for server in (remote, local):
        for g in GRADS:
            assert server.push(g, server.pull()[1]).all()
    np.testing.assert_allclose(remote.pull()[0], local.pull()[0], rtol=1e-6)
    assert remote.pull()[1].tolist() == [3, 3] and remote.updates() == 3
    assert len({ray.get(s.pid.remote()) for s in remote.shards}) == 2


def test_push_pull_is_a_push_then_a_pull():
    values = np.arange(7, dtype=np.float32)
    a = ShardedParameterServer(local_shards(values, 3, optimizer="adagrad", lr=0.1))
    b = ShardedParameterServer(local_shards(values, 3, optimizer="adagrad", lr=0.1))
    grad = np.linspace(-1, 1, 7).astype(np.float32)
    flat, versions = a.push_pull(grad, [0, 0, 0])
    b.push(grad, [0, 0, 0])
    expected, expected_versions = b.pull()
    np.testing.assert_array_equal(flat, expected)
    np.testing.assert_array_equal(versions, expected_versions)
    assert list(versions) == [1, 1, 1]
