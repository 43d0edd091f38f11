"""bench/dqn_learner_step.py's levers cannot rot: a variant builds the learner it names and steps it."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from bench import dqn_learner_step
from bench.small_frame_net import universe_q_network


@pytest.fixture
def built(monkeypatch):
    """The learners the bench's cases build, in order."""
    learners = []
    original = dqn_learner_step.DQNLearner
    monkeypatch.setattr(dqn_learner_step, "DQNLearner",
                        lambda *a, **k: learners.append(original(*a, **k)) or learners[-1])
    return learners


def test_a_channels_last_bf16_variant_steps_a_learner_whose_conv_weights_are_nhwc(built):
    run = dqn_learner_step.case("minatar-b128", "channels-last+bf16")
    run(2)
    (learner,) = built
    assert learner.updates == 2  # (bf16 holds only on a CPU with the units: the learner says so)
    conv = next(m for m in learner.online.modules() if isinstance(m, torch.nn.Conv2d))
    assert conv.weight.is_contiguous(memory_format=torch.channels_last) and not conv.weight.is_contiguous()


def test_a_staged_variant_hands_the_step_tensors_where_the_plain_one_hands_arrays(monkeypatch):
    seen = []
    monkeypatch.setattr(dqn_learner_step.DQNLearner, "_tensor", lambda self, x: seen.append(type(x)) or torch.as_tensor(x))
    for variant, kind in (("float32", "ndarray"), ("staged", "Tensor")):
        seen.clear()
        dqn_learner_step.case("minatar-b128", variant)(1)
        assert {t.__name__ for t in seen} == {kind} and len(seen) == 6  # obs, next_obs, reward, discount, action, weights


def test_an_unknown_lever_is_refused_with_the_ones_there_are():
    with pytest.raises(SystemExit, match="bf16, channels-last, compile"):
        dqn_learner_step.case("minatar-b128", "bf16+fp8")


def test_a_single_q_variant_drops_the_online_networks_pass_on_the_next_frames(built):
    passes = {}
    for variant in ("float32", "single-q"):
        run = dqn_learner_step.case("minatar-b128", variant)
        passes[variant] = 0
        built[-1].online.register_forward_hook(lambda *_, v=variant: passes.__setitem__(v, passes[v] + 1))
        run(1)
    assert passes == {"float32": 2, "single-q": 1}  # double Q: the online network on obs and on next_obs


def test_the_small_frame_contender_is_universe_starter_agents_torso_under_a_dueling_head():
    """Four 3x3 stride-2 convolutions of 32 with SAME padding: 42 -> 21 -> 11 -> 6 -> 3, so 3 x 3 x 32 = 288
    features, as universe-starter-agent's flattened torso; the shape's learner steps on it."""
    net = universe_q_network(spaces.Box(0, 255, (4, 42, 42), np.uint8), spaces.Discrete(6))
    assert net.torso.out_features == 288
    assert [m.out_features for m in net.head.advantage if isinstance(m, torch.nn.Linear)] == [256, 6]
    assert net(torch.zeros(2, 4, 42, 42, dtype=torch.uint8)).shape == (2, 6)
    dqn_learner_step.case("pong42u-b64", "float32")(1)
