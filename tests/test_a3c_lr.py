"""A3C's learning rate as the paper runs it: annealed linearly to 0 over the run, or drawn per run from
LogUniform(1e-4, 1e-2) (issue 19)."""

import json

import numpy as np
import pytest

from distrl import config as C
from distrl.errors import ConfigError
from distrl.params.shared_memory import SharedMemoryParams


def test_the_shared_store_anneals_the_rate_to_zero_over_its_updates():
    store = SharedMemoryParams.create(np.zeros(2), lr=0.1, decay=0.9, eps=0.01, anneal_updates=4)
    try:
        seen = []
        for _ in range(6):
            seen.append(store.current_lr())
            store.push(np.ones(2))
        # 0.1 * (1 - v/4) at v = 0..5, floored at 0
        assert seen == pytest.approx([0.1, 0.075, 0.05, 0.025, 0.0, 0.0])
        before = store.pull()[0]
        store.push(np.ones(2))  # at rate 0 a push leaves the parameters where they are
        assert np.array_equal(store.pull()[0], before)
    finally:
        store.close()
        store.unlink()


def test_a3c_presets_anneal_over_max_frames_and_both_stores_use_the_same_schedule():
    from distrl.architectures.a3c.builder import A3C
    cfg = C.build_config("a3c", "CartPole-v1", overrides={"max_frames": 1000, "actors": 2, "learner.anneal": "true"})
    arch = A3C(cfg)
    assert arch.anneal_updates() == 1000 // 5  # frames / (t_max 5 x frame skip 1)
    assert arch.shards().shard_args(0)[1]["anneal_updates"] == 200
    assert C.build_config("a3c", "ALE/Pong-v5").learner.anneal  # the paper's preset: 50M frames / (5 x 4)
    off = A3C(C.build_config("a3c", "CartPole-v1", overrides={"actors": 2}))  # a3c-cartpole: measured constant
    assert off.anneal_updates() is None


def test_a_sampled_rate_is_drawn_from_the_seed_and_kept_in_config_json():
    draws = [C.build_config("a3c", "CartPole-v1", overrides={"learner.lr_sample": "loguniform", "seed": s}).learner.lr
             for s in (1, 1, 2)]
    assert draws[0] == draws[1] != draws[2] and all(1e-4 <= d <= 1e-2 for d in draws)
    cfg = C.build_config("a3c", "CartPole-v1", overrides={"learner.lr_sample": "loguniform", "seed": 1})
    assert json.loads(C.dumps(cfg))["learner"]["lr"] == draws[0]  # what --resume reads back: no second draw
    with pytest.raises(ConfigError, match="not both"):
        C.build_config("a3c", "CartPole-v1", overrides={"learner.lr_sample": "loguniform", "learner.lr": "1e-3"})
    with pytest.raises(ConfigError, match="lr_sample"):
        C.build_config("a3c", "CartPole-v1", overrides={"learner.lr_sample": "uniform"})
