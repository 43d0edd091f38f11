"""`screen_size`: Atari frames smaller than the papers' 84x84 (issue 59's lever for a cheaper learner step on
CPUs; universe-starter-agent's A3C took 42x42), the same size in every env a run makes and in its networks."""

import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.architectures.apex.builder import Apex
from distrl.components.workers import learner_step
from distrl.envs import make_env
from distrl.envs.atari_vector import AtariVector
from distrl.errors import ConfigError
from distrl.nets import A3CCNN, BA3CCNN, NatureCNN, image_kind, make_q_network


def test_frames_of_36_pixels_a_side_and_more_get_the_atari_networks():
    assert image_kind((4, 84, 84)) == image_kind((4, 42, 42)) == image_kind((4, 36, 40)) == "atari"
    with pytest.raises(ConfigError, match=r"observation shape \(4, 35, 35\).*at least 36x36"):
        image_kind((4, 35, 35))


@pytest.mark.parametrize("side,nature,a3c,ba3c", [
    (84, 64 * 7 * 7, 32 * 9 * 9, 64 * 5 * 5),  # the papers' widths: 84 -> 20 -> 9 -> 7; 84 -> 20 -> 9; 84 -> .. -> 5
    (42, 64 * 1 * 1, 32 * 3 * 3, 64 * 2 * 2),  # 42 -> 9 -> 3 -> 1; 42 -> 9 -> 3; 42 -> 21 -> 10 -> 11/2=5 -> 2
])
def test_each_atari_torso_sizes_its_dense_layer_for_the_frame(side, nature, a3c, ba3c):
    assert NatureCNN(4, fc_units=None, frame=(side, side)).out_features == nature
    assert NatureCNN(4, frame=(side, side)).body[-2].in_features == nature
    assert A3CCNN(4, frame=(side, side)).body[-2].in_features == a3c
    assert BA3CCNN(4, frame=(side, side)).body[-2].in_features == ba3c
    net = make_q_network((4, side, side), 6)  # dueling: two 512-unit streams on the conv features
    assert net.head.value[0].in_features == nature
    assert net(torch.zeros(2, 4, side, side, dtype=torch.uint8)).shape == (2, 6)


def test_make_env_and_the_vector_env_give_the_same_42x42_frames():
    k = 2
    vec = AtariVector("ALE/Pong-v5", k, noop_max=0, screen_size=42)
    envs = [make_env("ALE/Pong-v5", "train", seed=j, noop_max=0, screen_size=42) for j in range(k)]
    obs = vec.reset()
    assert obs.shape == (k, 4, 42, 42) and obs.dtype == np.uint8
    np.testing.assert_array_equal(obs, np.stack([e.reset()[0] for e in envs]))
    for action in np.random.default_rng(0).integers(vec.num_actions, size=(60, k)):
        obs = vec.step(action)[0]
        np.testing.assert_array_equal(obs, np.stack([e.step(int(a))[0] for e, a in zip(envs, action)]))


@pytest.mark.parametrize("bad", [0, -1, 42.0, True])
def test_a_bad_screen_size_is_one_config_error(bad):
    with pytest.raises(ConfigError, match="screen_size must be an int >= 1") as exc:
        make_env("ALE/Pong-v5", screen_size=bad)
    assert "\n" not in str(exc.value)


def test_a_run_below_nature_cnns_smallest_frame_is_refused_before_it_starts(tmp_path):
    with pytest.raises(ConfigError, match="screen_size.*>= 36"):
        C.build_config("apex", "ALE/Pong-v5", overrides={"screen_size": 20, "run_dir": str(tmp_path / "run")})


def test_an_apex_run_at_42x42_acts_learns_and_evaluates_on_42x42_frames(tmp_path):
    """Actors (Gymnasium's envs and ale-py's vector env), replay, learner and evaluator all take the run's size:
    a network built for 42x42 frames fails on any 84x84 one."""
    cfg = C.build_config("apex", "ALE/Pong-v5", overrides={
        "actors": 1, "max_frames": 800, "seed": 0, "eval_episodes": 1, "eval_max_frames": 400, "replay.min_size": 64,
        "learner.batch_size": 8, "run_dir": str(tmp_path / "run"), "torch_threads": 1, "screen_size": 42})
    arch = Apex(cfg)
    replay, learner = arch.make_replay(), arch.make_learner()
    for vector in (False, True):
        cfg.actor.vector_env = vector
        actor = arch.make_actor(0, sink=replay, source=learner)
        actor.run(40)
        actor.flush()
    keys, batch, weights = replay.sample(8)
    assert batch["obs"].shape == (8, 4, 42, 42) and batch["next_obs"].shape == (8, 4, 42, 42)
    learner_step(replay, learner, (keys, batch, weights), trim_every=100)
    assert learner.updates == 1
    params, updates = learner.latest()
    result = arch.make_evaluator(1).evaluate(params, updates)
    assert result["episodes"] == 1 and np.isfinite(result["mean"])
