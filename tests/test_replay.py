"""Replay: sum tree arithmetic, sampling distributions, weights, removal, checkpoints."""

import os

import numpy as np
import pytest
from scipy.stats import chisquare

from distrl.errors import CheckpointError, ConfigError
from distrl.replay import FifoRemover, PrioritizedRemover, PrioritizedSampler, ReplayTable, SumTree, UniformSampler
from distrl.replay.table import SLOT_MASK
from tests.replay_files import load_table, save_table


def _batch(values, obs_shape=(2,)):
    v = np.asarray(values, dtype=np.int64)
    return {"id": v, "obs": np.repeat(v.astype(np.float32)[:, None], int(np.prod(obs_shape)), 1).reshape(-1, *obs_shape)}


def _ids(table, n=2000):
    return set(table.sample(n)[1]["id"].tolist())


# ---- SumTree ------------------------------------------------------------------------------

def test_sum_tree_totals_duplicates_and_growth():
    t = SumTree(4)
    t.update(np.array([0, 1, 2, 3]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert t.total() == 10.0
    t.update(np.array([1, 3, 1]), np.array([5.0, 0.5, 7.0]))  # index 1 twice: the last (7) wins
    assert t.get(np.array([0, 1, 2, 3])).tolist() == [1.0, 7.0, 3.0, 0.5]
    assert t.total() == 11.5
    t.update(np.array([6]), np.array([2.5]))  # beyond 4 leaves: doubles to 8, keeps values
    assert t.capacity == 8
    assert t.get(np.arange(8)).tolist() == [1.0, 7.0, 3.0, 0.5, 0.0, 0.0, 2.5, 0.0]
    assert t.total() == 14.0
    t.grow(20)
    assert t.capacity == 32 and t.total() == 14.0
    t.update(np.array([6, 0]), np.array([0.0, 0.0]))
    assert t.total() == 10.5


def test_sum_tree_find_hand_worked():
    # leaves [1, 0, 3, 4]: leaf 0 holds [0,1), leaf 1 nothing, leaf 2 [1,4), leaf 3 [4,8)
    t = SumTree(4)
    t.update(np.arange(4), np.array([1.0, 0.0, 3.0, 4.0]))
    prefix = np.array([0.0, 0.999, 1.0, 3.999, 4.0, 7.999])
    assert t.find(prefix).tolist() == [0, 0, 2, 2, 3, 3]
    # at or just under the total, trailing zero leaves must never be returned
    t.update(np.arange(4), np.array([1.0, 2.0, 0.0, 0.0]))
    edge = np.array([3.0, np.nextafter(3.0, 0.0), 10.0])
    assert t.find(edge).tolist() == [1, 1, 1]


def test_sum_tree_find_never_returns_zero_leaf_under_rounding():
    t = SumTree(1024)
    vals = np.full(1024, 0.1)
    vals[1000:] = 0.0
    vals[::7] = 0.0
    t.update(np.arange(1024), vals)
    prefix = np.linspace(0, t.total(), 5001)
    prefix[-3:] = [t.total() * (1 - 1e-16), np.nextafter(t.total(), 0), t.total()]
    leaves = t.find(prefix)
    assert np.all(vals[leaves] > 0)


@pytest.mark.parametrize("leaves", [1, 2, 4096, 3 * 4096 + 5, 1 << 15])
def test_sum_tree_find_matches_a_cumulative_sum_search(leaves):
    """Big trees are searched in two phases (one jump over the top 12 levels, then level by level):
    each prefix at an item's middle must find that item, and the total its last positive one."""
    rng = np.random.default_rng(leaves)
    vals = rng.random(leaves) * (rng.random(leaves) > 0.3)  # ~30% zero leaves
    vals[0] = max(vals[0], 0.5)
    t = SumTree(1)
    t.update(np.arange(leaves), vals)
    ends = np.cumsum(vals)
    positive = np.flatnonzero(vals > 0)
    middles = ends[positive] - vals[positive] / 2
    np.testing.assert_array_equal(t.find(middles), positive)
    assert t.find(np.array([0.0, t.total(), 2 * t.total()])).tolist() == [0, positive[-1], positive[-1]]


# ---- sampling -----------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.6, 0.0])
def test_prioritized_frequencies_chi_square(alpha):
    p = np.array([0.5, 1.0, 2.0, 3.0, 5.0])
    table = ReplayTable(10, sampler=PrioritizedSampler(alpha=alpha, eps=0.0), seed=1)
    table.add(_batch(range(5)), priorities=p)
    draws = 200_000
    counts = np.bincount(table.sample(draws)[1]["id"], minlength=5)
    expected = p**alpha / np.sum(p**alpha) * draws
    assert chisquare(counts, expected).pvalue > 0.001
    if alpha == 0.6:  # and it really is not uniform
        assert chisquare(counts, np.full(5, draws / 5)).pvalue < 1e-6


def test_uniform_sampler_with_holes_chi_square():
    table = ReplayTable(4, seed=2)
    table.add(_batch(range(10)))
    assert table.trim() == 6  # slots of ids 0..5 are now free holes
    keys, batch, w = table.sample(100_000)
    assert np.all(w == 1.0) and w.dtype == np.float32 and keys.dtype == np.int64
    counts = np.bincount(batch["id"], minlength=10)
    assert counts[:6].sum() == 0
    assert chisquare(counts[6:]).pvalue > 0.001


def test_importance_weights_by_hand():
    # alpha=1, eps=0: P = [1, 2, 4] / 7; w_i = (3 P_i)^-0.5 / max. With item 0 in the batch the
    # max weight is item 0's, so w = (P_i / P_0)^-0.5 = [1, 2^-0.5, 4^-0.5].
    table = ReplayTable(10, sampler=PrioritizedSampler(alpha=1.0, beta=0.5, eps=0.0), seed=3)
    keys = table.add(_batch([0, 1, 2]), priorities=np.array([1.0, 2.0, 4.0]))
    k, batch, w = table.sample(200)
    assert set(batch["id"].tolist()) == {0, 1, 2}
    expected = np.array([1.0, 2**-0.5, 0.5])
    np.testing.assert_allclose(w, expected[batch["id"]], rtol=1e-6)
    assert set(k.tolist()) == set(keys.tolist())
    for _ in range(20):  # a one-item batch is normalized by itself
        assert table.sample(1)[2].tolist() == [1.0]


def test_default_priority_is_max_seen():
    table = ReplayTable(10, sampler=PrioritizedSampler(alpha=1.0, beta=1.0, eps=0.0), seed=4)
    table.add(_batch([0]), priorities=np.array([5.0]))
    table.add(_batch([1]))  # gets 5.0, so both are equally likely and all weights are 1
    assert np.all(table.sample(500)[2] == 1.0)


def test_sample_empty_raises():
    with pytest.raises(ValueError, match="empty"):
        ReplayTable(5).sample(4)


# ---- removal ------------------------------------------------------------------------------

def test_fifo_trim_order_and_soft_capacity():
    table = ReplayTable(3, sampler=UniformSampler(), remover=FifoRemover(), seed=5)
    table.add(_batch([0, 1]))
    table.add(_batch([2, 3, 4]))  # soft capacity: add always succeeds
    assert len(table) == 5
    assert table.trim() == 2
    assert len(table) == 3 and _ids(table) == {2, 3, 4}
    assert table.trim() == 0
    table.add(_batch([5]))
    table.add(_batch([6, 7]))
    assert table.trim() == 3
    assert _ids(table) == {5, 6, 7}
    s = table.stats()
    assert (s["size"], s["capacity"], s["inserts"], s["removed"]) == (3, 3, 8, 5)
    assert s["samples"] == 4000


def test_prioritized_remover_prefers_low_priority():
    # 50 items at priority 0.01 and 50 at 10; weights (p+eps)^-0.4 differ by ~16x.
    low = 0
    for seed in range(5):
        table = ReplayTable(50, remover=PrioritizedRemover(alpha_evict=-0.4), seed=seed)
        table.add(_batch(range(100)), priorities=np.r_[np.full(50, 0.01), np.full(50, 10.0)])
        assert table.trim() == 50
        kept = _ids(table, 5000)
        assert len(kept) == 50
        low += 50 - sum(i < 50 for i in kept)
    assert low > 0.8 * 250  # removed low-priority items out of 250 removals
    # a positive exponent flips it
    table = ReplayTable(50, remover=PrioritizedRemover(alpha_evict=1.0), seed=0)
    table.add(_batch(range(100)), priorities=np.r_[np.full(50, 0.01), np.full(50, 10.0)])
    table.trim()
    assert sum(i < 50 for i in _ids(table, 5000)) > 40


def test_update_priorities_ignores_removed_keys_even_after_slot_reuse():
    table = ReplayTable(2, sampler=PrioritizedSampler(alpha=1.0, beta=1.0, eps=0.0), seed=6)
    k0 = table.add(_batch([0]))[0]
    table.add(_batch([1, 2]))
    assert table.trim() == 1  # FIFO: id 0 goes
    k3 = table.add(_batch([3]))[0]
    assert k3 != k0 and (k3 & SLOT_MASK) == (k0 & SLOT_MASK)  # id 3 reuses id 0's slot
    table.update_priorities(np.array([k0]), np.array([1000.0]))
    assert table.stats()["priority_updates"] == 0
    assert np.all(table.sample(300)[2] == 1.0)  # all priorities still equal
    table.update_priorities(np.array([k3, k3]), np.array([1000.0, 2.0]))  # last wins
    keys, batch, w = table.sample(2000)
    counts = np.bincount(batch["id"], minlength=4)
    assert counts[0] == 0 and 1.5 < counts[3] / counts[1] < 3  # P3 / P1 = 2 / 1
    assert table.stats()["priority_updates"] == 1


def test_schema_mismatch_names_the_field():
    table = ReplayTable(10)
    table.add({"obs": np.zeros((2, 4), np.float32), "action": np.zeros(2, np.int64)})
    with pytest.raises(ValueError, match="'obs'"):
        table.add({"obs": np.zeros((2, 5), np.float32), "action": np.zeros(2, np.int64)})
    with pytest.raises(ConfigError, match="'reward'"):
        table.add({"obs": np.zeros((2, 4), np.float32), "action": np.zeros(2, np.int64), "reward": np.zeros(2)})
    with pytest.raises(ValueError, match="'action'"):
        table.add({"obs": np.zeros((2, 4), np.float32), "action": np.zeros(3, np.int64)})
    with pytest.raises(ValueError, match="priorities"):
        table.add({"obs": np.zeros((2, 4), np.float32), "action": np.zeros(2, np.int64)}, np.array([1.0, np.nan]))


def test_storage_grows_past_capacity_and_reuses_slots():
    table = ReplayTable(1000, seed=7)
    for i in range(30):
        table.add(_batch(range(i * 50, i * 50 + 50)))
        table.trim()
    assert len(table) == 1000
    assert table._n_slots <= 1000 + 1000 // 8  # one soft-overflow step; trimmed slots were reused
    assert _ids(table, 20000) == set(range(500, 1500))


# ---- compression and checkpoints ----------------------------------------------------------

def test_compressed_fields_round_trip_exactly():
    rng = np.random.default_rng(8)
    obs = rng.integers(0, 256, size=(20, 4, 84, 84), dtype=np.uint8)
    obs[:10] //= 64  # some compressible, some not
    vec = rng.standard_normal((20, 3)).astype(np.float32)
    table = ReplayTable(100, seed=8, compress=("obs", "vec"))
    keys = table.add({"obs": obs, "vec": vec, "id": np.arange(20)})
    k, batch, _ = table.sample(64)
    assert batch["obs"].dtype == np.uint8 and batch["obs"].shape == (64, 4, 84, 84)
    assert batch["vec"].dtype == np.float32
    np.testing.assert_array_equal(batch["obs"], obs[batch["id"]])
    np.testing.assert_array_equal(batch["vec"], vec[batch["id"]])
    np.testing.assert_array_equal(k, keys[batch["id"]])
    assert table.nbytes() < 0.75 * (obs.nbytes + vec.nbytes)  # the 2-bit half compresses


def test_batches_deflated_by_the_sender_are_stored_as_the_table_would():
    """An actor packs (Ray runtime): the table files its bytes as they are, so what comes back, the
    bytes held and a checkpoint are the same as when the table compresses the same batch itself."""
    from distrl.replay import pack
    rng = np.random.default_rng(3)
    batch = {"obs": rng.integers(0, 4, size=(6, 4, 84, 84), dtype=np.uint8), "id": np.arange(6)}
    raw, packed = ReplayTable(10, seed=1, compress=("obs",)), ReplayTable(10, seed=1, compress=("obs",))
    raw.add(batch)
    packed.add(pack(batch, ("obs",)))
    packed.add(pack({"obs": batch["obs"][:2], "id": np.arange(6, 8)}, ("obs",)))  # the spec is kept
    assert packed.nbytes() > raw.nbytes() > 0
    packed.trim()
    assert len(packed) == 8
    _, out, _ = packed.sample(32)
    np.testing.assert_array_equal(out["obs"], np.concatenate([batch["obs"], batch["obs"][:2]])[out["id"]])

    equal = ReplayTable(10, seed=1, compress=("obs",))
    equal.add(pack(batch, ("obs",)))
    assert equal.nbytes() == raw.nbytes() and equal._fields["obs"][:6] == raw._fields["obs"][:6]

    with pytest.raises(ConfigError, match="stores it raw; build the table with compress=\\('obs',\\)"):
        ReplayTable(10).add(pack(batch, ("obs",)))
    with pytest.raises(ConfigError, match="item shape"):
        raw.add(pack({"obs": batch["obs"][:, :2], "id": np.arange(6)}, ("obs",)))
    with pytest.raises(ConfigError, match="deflated from int16"):
        raw.add(pack({"obs": batch["obs"].astype(np.int16), "id": np.arange(6)}, ("obs",)))


@pytest.mark.parametrize("codec", ["zlib", "lz4"])
def test_each_codec_round_trips_and_checks_what_senders_packed(codec, tmp_path):
    """replay.codec: the table and the actors' pack() use the same codec, a batch packed with the other one
    is refused by name, and a checkpoint keeps the codec (an old one without it reads as zlib)."""
    from distrl.replay import pack
    rng = np.random.default_rng(5)
    obs = np.full((12, 4, 84, 84), 87, np.uint8)  # Atari-like: a flat background, a few moving pixels
    obs[:, :, 30:40, 10:20] = rng.integers(0, 255, size=(12, 4, 10, 10))
    table = ReplayTable(20, seed=2, compress=("obs",), codec=codec)
    table.add(pack({"obs": obs[:6], "id": np.arange(6)}, ("obs",), codec))
    table.add({"obs": obs[6:], "id": np.arange(6, 12)})  # compressed by the table with the same codec
    _, batch, _ = table.sample(64)
    np.testing.assert_array_equal(batch["obs"], obs[batch["id"]])
    assert table.nbytes() < 0.1 * obs.nbytes
    other = "zlib" if codec == "lz4" else "lz4"
    with pytest.raises(ConfigError, match=f"compressed with {other}, this table stores {codec}; pack it with codec='{codec}'"):
        table.add(pack({"obs": obs[:1], "id": np.arange(1)}, ("obs",), other))
    restored = load_table(save_table(table, tmp_path))
    assert restored.codec == codec
    _, batch, _ = restored.sample(64)
    np.testing.assert_array_equal(batch["obs"], obs[batch["id"]])
    with pytest.raises(ConfigError, match="unknown replay codec 'snappy'; use one of \\['lz4', 'zlib'\\]"):
        ReplayTable(10, codec="snappy")


def test_a_checkpoint_from_before_the_codec_choice_reads_as_zlib(tmp_path):
    import json
    import zipfile
    table = ReplayTable(10, seed=1, compress=("obs",))
    obs = np.arange(4 * 2 * 3 * 3, dtype=np.uint8).reshape(4, 2, 3, 3)
    table.add({"obs": obs, "id": np.arange(4)})
    with np.load(save_table(table, tmp_path)) as z:  # the same file as distrl wrote before the codec field
        arrays = dict(z)
    meta = json.loads(bytes(arrays["meta"]).decode())
    del meta["codec"]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(tmp_path / "old.npz", **arrays)
    assert zipfile.is_zipfile(tmp_path / "old.npz")
    old = load_table(tmp_path / "old.npz")
    assert old.codec == "zlib"
    _, batch, _ = old.sample(16)
    np.testing.assert_array_equal(batch["obs"], obs[batch["id"]])


def _filled_table(path_seed=9):
    table = ReplayTable(30, sampler=PrioritizedSampler(alpha=0.6, beta=0.4), remover=PrioritizedRemover(),
                        seed=path_seed, compress=("obs",))
    rng = np.random.default_rng(path_seed)
    for i in range(4):
        table.add({"id": np.arange(i * 15, i * 15 + 15), "obs": rng.integers(0, 9, (15, 4, 6, 6), dtype=np.uint8)},
                  priorities=rng.random(15) + 0.1)
        keys, _, _ = table.sample(8)
        table.update_priorities(keys, rng.random(8) * 3)
        table.trim()
    return table


def _same_future(a, b):
    for _ in range(3):
        ka, ba, wa = a.sample(16)
        kb, bb, wb = b.sample(16)
        np.testing.assert_array_equal(ka, kb)
        np.testing.assert_array_equal(wa, wb)
        for f in ba:
            np.testing.assert_array_equal(ba[f], bb[f])
        a.update_priorities(ka, np.arange(16.0))
        b.update_priorities(kb, np.arange(16.0))
        new = {"id": np.arange(3), "obs": np.ones((3, 4, 6, 6), np.uint8)}
        np.testing.assert_array_equal(a.add(new), b.add(new))
        assert a.trim() == b.trim()


def test_save_restore_round_trip(tmp_path):
    table = _filled_table()
    path = save_table(table, tmp_path)
    assert sorted(os.listdir(path.parent)) == ["ckpt-0000000001.pt", path.name]  # no temp file left behind
    restored = load_table(path)
    assert restored.stats() == table.stats() and len(restored) == 30
    assert restored.nbytes() == table.nbytes()
    _same_future(table, restored)
    assert restored.stats() == table.stats()


def test_save_restore_empty_and_uniform(tmp_path):
    assert len(load_table(save_table(ReplayTable(5, seed=1), tmp_path / "e"))) == 0
    t = ReplayTable(5, seed=1)
    t.add(_batch(range(8)))
    r = load_table(save_table(t, tmp_path / "u"))
    np.testing.assert_array_equal(t.sample(50)[0], r.sample(50)[0])
    assert t.trim() == r.trim() == 3


def test_restore_corrupt_or_missing_raises_checkpoint_error(tmp_path):
    path = save_table(_filled_table(), tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=path.name):
        load_table(path)
    path.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match=path.name):
        load_table(path)
    with pytest.raises(CheckpointError, match="missing.npz"):
        load_table(tmp_path / "missing.npz")
    state = _filled_table().state_dict()
    state["priorities"] = state["priorities"][:3]  # arrays that disagree: refused by name, not half-loaded
    with pytest.raises(CheckpointError, match="replay checkpoint shard 7 is corrupt"):
        ReplayTable.from_state(state, "shard 7")


def test_bad_config_raises_config_error():
    with pytest.raises(ConfigError):
        ReplayTable(0)
    with pytest.raises(ConfigError):
        ReplayTable(10, compress="obs")
    with pytest.raises(ConfigError):
        PrioritizedSampler(alpha=-1)
    with pytest.raises(ConfigError):
        PrioritizedRemover(eps=0.0)
    with pytest.raises(ConfigError, match="'next_obs'"):
        ReplayTable(10, compress=("next_obs",)).add(_batch([1]))


# ---- sharded client ------------------------------------------------------------------------

def _sharded_setup(n_shards, priorities, alpha=0.6, beta=0.4):
    from distrl.replay.sharded import ShardedReplay
    shards = [ReplayTable(100, sampler=PrioritizedSampler(alpha, beta), seed=i) for i in range(n_shards)]
    client = ShardedReplay(shards, PrioritizedSampler(alpha, beta), seed=0)
    for i, p in enumerate(priorities):  # one item per add: round-robin puts item i on shard i % n
        client.add({"x": np.array([i], np.int64)}, np.array([p]))
    return client


def test_sharded_sampling_matches_one_table_distribution():
    from scipy.stats import chisquare
    prios = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    client = _sharded_setup(2, prios)
    counts = np.zeros(5)
    for _ in range(400):
        _, batch, _ = client.sample(500)
        counts += np.bincount(batch["x"], minlength=5)
    expected = prios ** 0.6 / (prios ** 0.6).sum() * counts.sum()
    assert chisquare(counts, expected).pvalue > 0.001


def test_sharded_weights_are_global_importance_weights():
    prios = np.array([1.0, 2.0, 3.0])
    client = _sharded_setup(2, prios, alpha=1.0, beta=1.0)
    keys, batch, w = client.sample(64)
    # alpha = beta = 1: P(i) = p_i / 6, w_i = (3 P(i))^-1 = 2 / p_i, normalized by the batch max.
    raw = 2.0 / prios[batch["x"]]
    np.testing.assert_allclose(w, raw / raw.max(), rtol=1e-5)
    assert set(np.unique(keys[:, 0])) <= {0, 1}


@pytest.mark.parametrize("shards", [1, 3])
def test_sharded_sample_joins_fields_into_given_buffers(shards):
    """out=: the staging buffers a GPU learner's sample threads own (components/staging.py) receive the
    joined field, the batch hands them back, and the other fields are as without them."""
    client = _sharded_setup(shards, [1.0] * 6)
    buf = np.full(40, -1, np.int64)
    keys, batch, w = client.sample(40, out={"x": buf})
    assert batch["x"] is buf and set(buf.tolist()) <= set(range(6)) and buf.min() >= 0
    # each key's shard holds that item: item i went to shard i % shards
    np.testing.assert_array_equal(keys[:, 0], buf % shards)
    assert w.shape == (40,)


def test_sharded_priority_updates_batched_reach_the_shards_in_one_call_each():
    """priority_batch=3 (the Ray learner's batching): nothing is sent for two steps, the third sends every
    update kept, one call per shard touched, in order (a later update of the same key wins)."""
    from distrl.replay.sharded import ShardedReplay
    calls = []

    def call(target, method, *args):
        if method == "update_priorities":
            calls.append((method, target, *args))
        return getattr(target, method)(*args)

    shards = [ReplayTable(10, PrioritizedSampler(1.0, 1.0), seed=i) for i in range(2)]
    client = ShardedReplay(shards, PrioritizedSampler(1.0, 1.0), seed=0, call=call, priority_batch=3)
    for i in range(4):
        client.add({"x": np.array([i], np.int64)}, np.array([1.0]))
    keys = np.array([[0, k] for k in shards[0].sample(1)[0]] + [[1, k] for k in shards[1].sample(1)[0]])
    assert client.update_priorities(keys[:1], np.array([5.0])) == [] and calls == []
    assert client.update_priorities(keys[1:], np.array([7.0])) == [] and calls == []
    sent = client.update_priorities(keys[:1], np.array([9.0]))
    assert len(sent) == 2 and [c[1] for c in calls] == shards
    np.testing.assert_array_equal(calls[0][3], [5.0, 9.0])
    # alpha 1: a shard's mass is the sum of its priorities (each plus the samplers' epsilon, 1e-6)
    assert shards[0].mass()[0] == pytest.approx(9.0 + 1.0) and shards[1].mass()[0] == pytest.approx(7.0 + 1.0)
    assert client.flush_priorities() == []


def test_sharded_priority_updates_reach_the_right_shard():
    client = _sharded_setup(2, [1.0, 1.0, 1.0, 1.0])
    keys, batch, _ = client.sample(50)
    client.update_priorities(keys, np.where(batch["x"] == 3, 100.0, 1e-3))
    _, batch, _ = client.sample(2000)
    assert (batch["x"] == 3).mean() > 0.9
    assert len(client) == 4 and client.stats()["inserts"] == 4
