"""bench/dqn_learner_step.py's levers cannot rot: a variant builds the learner it names and steps it."""

import pytest
import torch

from bench import dqn_learner_step


def test_a_channels_last_bf16_variant_steps_a_learner_whose_conv_weights_are_nhwc(monkeypatch):
    built = []
    original = dqn_learner_step.DQNLearner
    monkeypatch.setattr(dqn_learner_step, "DQNLearner", lambda *a, **k: built.append(original(*a, **k)) or built[-1])
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
