import multiprocessing as mp
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from distrl.params.shared_memory import SharedMemoryParams, rmsprop_step


@pytest.fixture
def make_store():
    stores = []

    def make(initial, **kwargs):
        stores.append(SharedMemoryParams.create(np.asarray(initial, dtype=np.float32), **kwargs))
        return stores[-1]

    yield make
    for store in stores:
        store.close()
        store.unlink()


def test_rmsprop_step_by_hand():
    params = np.array([1.0, 1.0], dtype=np.float32)
    stats = np.array([26.0, 0.0], dtype=np.float32)
    grad = np.array([2.0, 4.0], dtype=np.float32)
    rmsprop_step(params, stats, grad, lr=0.3, decay=0.5, eps=1.0)
    # stats  = 0.5 * [26, 0] + 0.5 * [2^2, 4^2]  = [13 + 2, 0 + 8]  = [15, 8]
    # sqrt(stats + eps) = sqrt([16, 9])          = [4, 3]           (eps inside the root)
    # params = [1, 1] - 0.3 * [2 / 4, 4 / 3]     = [0.85, 0.6]
    np.testing.assert_array_equal(stats, [15.0, 8.0])
    np.testing.assert_allclose(params, [0.85, 0.6], rtol=1e-6)


def test_rmsprop_step_matches_torch_when_eps_is_zero():
    # torch.optim.RMSprop adds eps outside the root (sqrt(v) + eps) and the paper inside (sqrt(v + eps)):
    # with eps = 0 both are lr * grad / sqrt(v), so only then are they comparable.
    rng = np.random.default_rng(0)
    start = rng.normal(size=5).astype(np.float32)
    params, stats = start.copy(), np.zeros(5, dtype=np.float32)
    theta = torch.tensor(start, requires_grad=True)
    opt = torch.optim.RMSprop([theta], lr=0.01, alpha=0.9, eps=0.0)
    for _ in range(3):
        grad = rng.normal(size=5).astype(np.float32)
        rmsprop_step(params, stats, grad, lr=0.01, decay=0.9, eps=0.0)
        theta.grad = torch.from_numpy(grad)
        opt.step()
    np.testing.assert_allclose(params, theta.detach().numpy(), rtol=1e-5)


def test_create_and_attach_share_memory_and_count_pushes(make_store):
    owner = make_store([1.0, 2.0, 3.0])
    worker = SharedMemoryParams.attach(owner.spec())
    try:
        worker.push(np.array([0.1, -0.2, 0.3]), np.array([0]))
        values, versions = owner.pull()
        np.testing.assert_array_equal(values, worker.pull()[0])
        assert not np.array_equal(values, [1.0, 2.0, 3.0])
        assert versions.tolist() == [1] and versions.dtype == np.int64
        new_values, versions = owner.push_pull(np.ones(3), versions)
        assert versions.tolist() == [2] and not np.array_equal(new_values, values)
        assert worker.updates() == 2 and worker.counters()["applied"] == 2
        with pytest.raises(ValueError):
            worker.push(np.ones(4), versions)
    finally:
        worker.close()


def _push_in_process(spec, grad):
    store = SharedMemoryParams.attach(spec)
    store.push(grad, np.array([0]))
    store.close()


def _run_two_workers(spec, grad_a, grad_b):
    ctx = mp.get_context("spawn")
    for grad in (grad_a, grad_b):   # one after the other: B starts once A's push is in memory
        proc = ctx.Process(target=_push_in_process, args=(spec, grad))
        proc.start()
        proc.join(timeout=60)
        assert proc.exitcode == 0


@pytest.mark.timeout(120)
def test_statistics_are_shared_between_worker_processes(make_store):
    lr, decay, eps = 0.1, 0.5, 1.0
    grad_a, grad_b = np.array([2.0, 0.0], dtype=np.float32), np.array([2.0, 4.0], dtype=np.float32)
    shared = make_store([1.0, 1.0], lr=lr, decay=decay, eps=eps)
    private = make_store([1.0, 1.0], lr=lr, decay=decay, eps=eps, shared_stats=False)
    _run_two_workers(shared.spec(), grad_a, grad_b)
    _run_two_workers(private.spec(), grad_a, grad_b)

    # Shared: A leaves g = 0.5 * [4, 0] = [2, 0]; theta = [1 - 0.1 * 2 / sqrt(3), 1].
    # B continues from A's g: g = 0.5 * [2, 0] + 0.5 * [4, 16] = [3, 8];
    # theta -= 0.1 * [2 / sqrt(4), 4 / sqrt(9)].
    expect_shared = [1 - 0.1 * 2 / np.sqrt(3) - 0.1 * 2 / 2, 1 - 0.1 * 4 / 3]
    # Private: B starts from g = 0: g = 0.5 * [4, 16] = [2, 8]; theta -= 0.1 * [2 / sqrt(3), 4 / 3].
    expect_private = [1 - 0.1 * 2 / np.sqrt(3) - 0.1 * 2 / np.sqrt(3), 1 - 0.1 * 4 / 3]
    np.testing.assert_allclose(shared.pull()[0], expect_shared, rtol=1e-6)
    np.testing.assert_allclose(private.pull()[0], expect_private, rtol=1e-6)
    assert not np.allclose(shared.pull()[0], private.pull()[0])
    assert shared.counters()["version"] == shared.counters()["applied"] == 2
    # The owner's statistics are the shared ones the workers left; the private store's owner kept its own.
    np.testing.assert_allclose(shared.state_dict()["stats"].numpy(), [3.0, 8.0])
    np.testing.assert_array_equal(private.state_dict()["stats"].numpy(), [0.0, 0.0])


@pytest.mark.timeout(60)
def test_a_worker_with_its_own_resource_tracker_leaves_the_segments(make_store):
    # A spawned child shares its parent's resource tracker; a process started otherwise (a Ray actor)
    # has its own, which on Python < 3.13 would unlink an attached segment when the process exits.
    store = make_store([1.0, 1.0])
    code = ("from distrl.params.shared_memory import SharedMemoryParams as S; "
            f"h = S.attach({store.spec()!r}); h.push([1.0, 1.0]); h.close()")
    subprocess.run([sys.executable, "-c", code], check=True)
    time.sleep(1.0)   # the child's tracker cleans up just after the child exits
    SharedMemoryParams.attach(store.spec()).close()
    assert store.updates() == 1


def test_state_dict_round_trip(make_store, tmp_path):
    store = make_store([1.0, -1.0, 0.5])
    store.push(np.array([0.3, 0.2, -0.1]), np.array([0]))
    torch.save(store.state_dict(), tmp_path / "ps.pt")
    state = torch.load(tmp_path / "ps.pt", weights_only=True)
    other = make_store(np.zeros(3))
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.pull()[0], store.pull()[0])
    assert other.counters() == store.counters()
    # The statistics came along too: the same next push gives the same parameters.
    grad = np.array([-0.4, 0.1, 0.2])
    np.testing.assert_array_equal(other.push_pull(grad, [1])[0], store.push_pull(grad, [1])[0])


def test_unlink_frees_the_segments():
    store = SharedMemoryParams.create(np.ones(4, dtype=np.float32))
    spec = store.spec()
    store.close()
    store.unlink()
    with pytest.raises(FileNotFoundError):
        SharedMemoryParams.attach(spec)
