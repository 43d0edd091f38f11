"""Each frame of the stacks stored once (replay/frames.py, replay.share_frames): the indices a batch is cut
into, the pool's counts, and a table that gives back exactly the stacks it was given, on every path in."""

import numpy as np
import pytest

from distrl.errors import ConfigError
from distrl.replay import PrioritizedRemover, PrioritizedSampler, ReplayTable, pack
from distrl.replay.frames import FRAMES, FramePool, share_frames
from tests.replay_files import load_table, save_table

STACK, N = 3, 2  # stacks of 3 frames, 2-step transitions


def episode(length: int, first: int = 0, shape=(2, 2)) -> np.ndarray:
    """Frames first, first+1, ... (each filled with its number), as an env emits them."""
    return np.stack([np.full(shape, first + t, np.uint8) for t in range(length)])


def transitions(frames: np.ndarray) -> dict:
    """obs_t and next_obs = obs_{t+N} as a frame stack builds them: padded with the episode's first frame."""
    def stack(t):
        return np.stack([frames[max(0, t - STACK + 1 + k)] for k in range(STACK)])
    ts = range(len(frames) - N)
    return {"obs": np.stack([stack(t) for t in ts]), "next_obs": np.stack([stack(t + N) for t in ts]),
            "t": np.arange(len(frames) - N)}


def test_a_batch_is_cut_into_its_distinct_frames_and_each_stacks_indices():
    batch = transitions(episode(5))  # frames 0..4: 3 transitions
    out = share_frames(batch, ("obs", "next_obs"))
    # distinct frames in order of first appearance: obs rows [0 0 0], [0 0 1], [0 1 2]; next_obs adds 3 and 4
    np.testing.assert_array_equal(out[FRAMES][:, 0, 0], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(out["obs"], [[0, 0, 0], [0, 0, 1], [0, 1, 2]])
    np.testing.assert_array_equal(out["next_obs"], [[0, 1, 2], [1, 2, 3], [2, 3, 4]])
    assert out["obs"].dtype == np.int32 and out["t"] is batch["t"]
    for name in ("obs", "next_obs"):
        np.testing.assert_array_equal(out[FRAMES][out[name]], batch[name])
    with pytest.raises(ValueError, match="field 'next_obs' has shape \\(3, 3\\): shared frames need stacks"):
        share_frames({"obs": batch["obs"], "next_obs": np.zeros((3, 3))}, ("obs", "next_obs"))


def test_the_pool_counts_holders_frees_a_frame_with_none_and_reuses_its_id():
    pool = FramePool((2, 2), np.uint8, compress=False)
    ids = pool.add(episode(3, first=10))
    np.testing.assert_array_equal(ids, [0, 1, 2])
    assert pool.add(np.zeros((0, 2, 2), np.uint8)).size == 0 and len(pool) == 3
    pool.hold(np.array([[0, 0, 1], [1, 2, 2]]))  # counts 2, 2, 2
    pool.release(np.array([0, 1]))  # 1, 1, 2
    assert len(pool) == 3
    pool.release(np.array([0, 2]))  # 0, 1, 1: frame 0 goes
    assert len(pool) == 2
    np.testing.assert_array_equal(pool.add(episode(1, first=20)), [0])  # its id is taken again
    np.testing.assert_array_equal(pool.gather(np.array([[0, 1, 2]]))[0, :, 0, 0], [20, 11, 12])
    with pytest.raises(RuntimeError, match="released more often than held"):
        pool.release(np.array([1, 1]))


@pytest.mark.parametrize("compress", [(), ("obs", "next_obs")], ids=["raw", "compressed"])
@pytest.mark.parametrize("packed", [False, True], ids=["stacks", "packed"])
def test_a_sharing_table_gives_back_the_stacks_it_was_given_and_frees_evicted_frames(compress, packed, tmp_path):
    first, second = transitions(episode(30)), transitions(episode(20, first=100))  # two episodes
    data = {k: np.concatenate([first[k], second[k]]) for k in first}
    data["t"] = np.arange(len(data["t"]))  # each transition's number
    shared = ("obs", "next_obs")
    table = ReplayTable(20, PrioritizedSampler(0.6, 0.4), PrioritizedRemover(), seed=3, compress=compress,
                        codec="lz4", shared=shared)
    rng = np.random.default_rng(0)
    for start in range(0, len(data["t"]), 10):
        part = {k: v[start:start + 10] for k, v in data.items()}
        table.add(pack(part, compress, "lz4", shared) if packed else part, rng.uniform(0.1, 2, len(part["t"])))
        table.trim()
    _, batch, _ = table.sample(64)
    for name in shared:
        np.testing.assert_array_equal(batch[name], data[name][batch["t"]])
    kept = [table._fields[name][table._slot_key >= 0] for name in shared]
    assert len(table._pool) == len(np.unique(np.concatenate([k.ravel() for k in kept])))  # no frame kept for none
    assert len(table) == 20 and len(table._pool) < 20 * 2 * STACK / 2
    restored = load_table(save_table(table, tmp_path))
    assert restored.shared == shared and len(restored._pool) == len(table._pool)
    _, a, _ = table.sample(32)
    _, b, _ = restored.sample(32)  # the sampler's generator was saved with it
    for name in ("t", *shared):
        np.testing.assert_array_equal(a[name], b[name])
    for t in (table, restored):  # both go on alike: the same frames freed as the same items leave
        t.add({k: v[:10] for k, v in data.items()}, np.ones(10))
        t.trim()
    assert len(restored._pool) == len(table._pool)


def test_shared_raw_frames_take_a_seventh_of_the_frames_of_raw_stacks():
    """Atari-sized: stacks of 4 84x84 frames, 3-step transitions, one env's flush of 50: 53 frames in place
    of 400 (the pool's first allocation holds 64)."""
    frames = np.random.default_rng(1).integers(0, 255, (53 + 3, 84, 84), dtype=np.uint8)
    stack = [np.stack([frames[max(0, t - 3 + k)] for k in range(4)]) for t in range(56)]
    batch = {"obs": np.stack(stack[:50]), "next_obs": np.stack(stack[3:53]), "a": np.zeros(50)}
    stacks = ReplayTable(50, seed=0)
    stacks.add(batch)
    shared = ReplayTable(50, seed=0, shared=("obs", "next_obs"))
    shared.add(batch)
    assert len(shared._pool) == 53  # frames 0..52: each once
    assert shared.nbytes() < stacks.nbytes() / 6  # 64 frames for 400, and the indices


def test_what_a_sharing_table_refuses_it_names():
    batch = transitions(episode(6))
    with pytest.raises(ConfigError, match="compress all of them or none"):
        ReplayTable(10, compress=("obs",), shared=("obs", "next_obs"))
    raw = ReplayTable(10, shared=("obs", "next_obs"))
    with pytest.raises(ConfigError, match="frames arrive compressed \\(Packed\\), this table stores them raw"):
        raw.add(pack(batch, ("obs", "next_obs"), "zlib", ("obs", "next_obs")))
    lz4 = ReplayTable(10, compress=("obs", "next_obs"), codec="lz4", shared=("obs", "next_obs"))
    with pytest.raises(ConfigError, match="compressed with zlib, this table stores lz4"):
        lz4.add(pack(batch, ("obs", "next_obs"), "zlib", ("obs", "next_obs")))
    for sent in (batch, share_frames(batch, ("obs", "next_obs"))):
        with pytest.raises(ConfigError, match="shared names field 'next_obs' that the batch lacks"):
            raw.add({k: v for k, v in sent.items() if k != "next_obs"})
    bad = share_frames(batch, ("obs", "next_obs"))
    bad["obs"] = bad["obs"] + 10
    with pytest.raises(ConfigError, match="'obs' must hold \\(batch, stack\\) indices into the batch's 6 frames"):
        raw.add(bad)
    with pytest.raises(ConfigError, match="carries shared frames \\(pack\\(shared=...\\)\\) but this table stores whole"):
        ReplayTable(10).add(share_frames(batch, ("obs", "next_obs")))
    raw.add(batch)
    with pytest.raises(ConfigError, match="frames are \\(3, 3\\) uint8, this table's are \\(2, 2\\) uint8"):
        raw.add(transitions(episode(6, shape=(3, 3))))


@pytest.mark.parametrize("compress", [True, False], ids=["lz4", "raw"])
def test_apex_with_shared_frames_samples_what_it_samples_without_in_a_fraction_of_the_memory(tmp_path, compress):
    """replay.share_frames on Pong: the actor's transitions are the same, the table hands back the same
    batch for the same draw, in a seventh of the frames: about a sixth of the bytes raw; compressed, where
    a blob's own overhead weighs more, under half."""
    from distrl import config as C
    from distrl.architectures.apex.builder import Apex
    from distrl.components.workers import learner_step

    def filled(share: bool):
        cfg = C.build_config("apex", "ALE/Pong-v5", overrides={
            "actors": 1, "max_frames": 800, "seed": 0, "eval_episodes": 0, "replay.min_size": 64,
            "learner.batch_size": 8, "replay.codec": "lz4", "replay.compress": compress,
            "replay.share_frames": share, "run_dir": str(tmp_path / f"run-{share}"), "torch_threads": 1})
        arch = Apex(cfg)
        replay, learner = arch.make_replay(), arch.make_learner()
        actor = arch.make_actor(0, sink=replay, source=learner)
        actor.run(100)
        actor.flush()
        return arch, replay, learner

    _, plain, _ = filled(False)
    arch, shared, learner = filled(True)
    assert shared.shared == ("obs", "next_obs") and len(shared) == len(plain) == 97
    (k1, b1, w1), (k2, b2, w2) = plain.sample(32), shared.sample(32)
    np.testing.assert_array_equal(k1, k2)
    np.testing.assert_array_equal(w1, w2)
    for name in b1:
        np.testing.assert_array_equal(b1[name], b2[name])
    assert shared.nbytes() < plain.nbytes() / (5 if not compress else 2)
    learner_step(shared, learner, (k2, b2, w2), trim_every=100)
    assert learner.updates == 1
