"""A3C-family learning rules and networks (Mnih et al. 2016), numbers computed by hand."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from distrl.algos.actor_critic import a3c_continuous_loss, a3c_loss, a3c_terms, gaussian_entropy, gaussian_log_prob
from distrl.algos.q_learning import (
    annealed_epsilon,
    exploration_epsilons,
    nstep_returns,
    onestep_q_targets,
    q_loss,
    sarsa_targets,
)
from distrl.nets import GaussianPolicyValueNet, PolicyValueNet, make_policy_value_net

torch.set_num_threads(1)
LN3 = math.log(3.0)


def test_nstep_returns_bootstrap_and_terminal():
    r = torch.tensor([1.0, 2.0, 3.0])
    # no terminal: R2 = 3 + 0.9*10 = 12; R1 = 2 + 0.9*12 = 12.8; R0 = 1 + 0.9*12.8 = 12.52
    assert nstep_returns(r, torch.zeros(3), 10.0, 0.9).tolist() == pytest.approx([12.52, 12.8, 12.0])
    # done at t=1: R2 = 12; R1 = 2 (no bootstrap across the end); R0 = 1 + 0.9*2 = 2.8
    assert nstep_returns(r, torch.tensor([0.0, 1.0, 0.0]), 10.0, 0.9).tolist() == pytest.approx([2.8, 2.0, 12.0])
    # done at the last step: the bootstrap is ignored: R2 = 3; R1 = 2 + 2.7 = 4.7; R0 = 1 + 0.9*4.7 = 5.23
    assert nstep_returns(r, torch.tensor([0.0, 0.0, 1.0]), 10.0, 0.9).tolist() == pytest.approx([5.23, 4.7, 3.0])


def test_nstep_returns_batched_columns_and_detached_bootstrap():
    rewards = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])  # [T=3, B=2]
    dones = torch.tensor([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    bootstrap = torch.tensor([10.0, 10.0], requires_grad=True)
    out = nstep_returns(rewards, dones, bootstrap, 0.9)
    assert out[:, 0].tolist() == pytest.approx([12.52, 12.8, 12.0])  # same columns as above
    assert out[:, 1].tolist() == pytest.approx([2.8, 2.0, 12.0])
    assert not out.requires_grad


def test_onestep_q_and_sarsa_targets():
    reward, done = torch.tensor([1.0, 1.0]), torch.tensor([0.0, 1.0])
    next_q = torch.tensor([[1.0, 5.0], [2.0, 3.0]])
    # Q: 1 + 0.9 * max(1, 5) = 5.5 ; terminal row: 1
    assert onestep_q_targets(reward, done, next_q, 0.9).tolist() == pytest.approx([5.5, 1.0])
    # Sarsa uses the action taken next (0, not the argmax 1): 1 + 0.9 * 1 = 1.9 ; terminal row: 1
    assert sarsa_targets(reward, done, next_q, torch.tensor([0, 1]), 0.9).tolist() == pytest.approx([1.9, 1.0])


def test_q_loss_is_mean_half_squared_error():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = q_loss(q, torch.tensor([1, 0]), torch.tensor([3.0, 1.0]))
    # q(s,a) = [2, 3]; errors [1, -2]; 0.5 * [1, 4] = [0.5, 2]; mean 1.25
    assert loss.item() == pytest.approx(1.25)
    loss.backward()  # d/dq(s,a) = -(y - q)/B = [-0.5, 1.0]
    assert q.grad.flatten().tolist() == pytest.approx([0.0, -0.5, 1.0, 0.0])


def _a3c_batch():
    logits = torch.tensor([[0.0, LN3], [0.0, LN3]], requires_grad=True)  # softmax -> [0.25, 0.75]
    values = torch.tensor([1.0, 1.5], requires_grad=True)
    return logits, torch.tensor([1, 0]), torch.tensor([2.0, 1.0]), values


def test_a3c_loss_terms_by_hand():
    logits, actions, returns, values = _a3c_batch()
    total, terms = a3c_loss(logits, actions, returns, values)
    # log pi(a) = [ln 0.75, ln 0.25]; A = R - V = [1, -0.5]
    # policy = -mean(ln 0.75 * 1, ln 0.25 * -0.5) = -(ln 3 - ln 4 + ln 2)/2 = -0.5 ln 1.5
    policy = -0.5 * math.log(1.5)
    value = 0.5 * (1.0 + 0.25) / 2  # 0.5 * mean(A^2) = 0.3125
    entropy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))  # 0.5623, same for both rows
    assert terms["policy"] == pytest.approx(policy)
    assert terms["value"] == pytest.approx(0.3125) and value == 0.3125
    assert terms["entropy"] == pytest.approx(entropy)
    assert total.item() == pytest.approx(policy + value - 0.01 * entropy)  # 0.10414
    total.backward()
    # dV: value term only: 0.5 * 2 (V - R) / B = [-0.5, 0.25]
    assert values.grad.tolist() == pytest.approx([-0.5, 0.25])


def test_summed_rollout_losses_are_the_papers_accumulated_gradients():
    """reduction="sum" (the paper: Algorithm S3 adds every step's gradient): twice the two-step mean."""
    logits, actions, returns, values = _a3c_batch()
    total, terms = a3c_loss(logits, actions, returns, values, reduction="sum")
    policy, value = -math.log(1.5), 0.5 * (1.0 + 0.25)  # -(ln 0.75 - 0.5 ln 0.25) = -ln 1.5; 0.5 * sum(A^2)
    entropy = -2 * (0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert (terms["policy"], terms["value"], terms["entropy"]) == pytest.approx((policy, value, entropy))
    assert total.item() == pytest.approx(policy + value - 0.01 * entropy)
    total.backward()
    assert values.grad.tolist() == pytest.approx([-1.0, 0.5])  # dV = (V - R), unscaled by the length
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = q_loss(q, torch.tensor([1, 0]), torch.tensor([3.0, 1.0]), reduction="sum")
    assert loss.item() == pytest.approx(2.5)  # 0.5 + 2
    loss.backward()
    assert q.grad.flatten().tolist() == pytest.approx([0.0, -1.0, 2.0, 0.0])


def test_a3c_paper_preset_sums_and_small_presets_keep_the_mean():
    from distrl import config as C
    assert C.build_config("a3c", "ALE/Pong-v5").rl.reduction == "sum"
    for preset in ("a3c-cartpole", "a3c-pendulum", "a3c-minatar", "nstep-q-cartpole", "sarsa-minatar"):
        assert C.PRESETS[preset][2]["rl.reduction"] == "mean"


def test_a3c_policy_gradient_by_hand_and_advantage_detached():
    logits, actions, returns, values = _a3c_batch()
    total, _ = a3c_loss(logits, actions, returns, values, entropy_beta=0.0, value_coef=0.0)
    total.backward()
    # d policy / d logits = -A/B * (onehot(a) - p): row 0: -0.5 * [-0.25, 0.25]; row 1: 0.25 * [0.75, -0.75]
    assert logits.grad.flatten().tolist() == pytest.approx([0.125, -0.125, 0.1875, -0.1875])
    assert values.grad is None or torch.all(values.grad == 0)  # nothing flows through the advantage


def test_value_head_gets_no_policy_gradient():
    torch.manual_seed(0)
    net = PolicyValueNet((3,), 2, hidden=(8,))
    logits, value, _ = net(torch.randn(4, 3))
    total, _ = a3c_loss(logits, torch.tensor([0, 1, 1, 0]), torch.randn(4), value, value_coef=0.0)
    total.backward()
    assert net.value.weight.grad is None or torch.all(net.value.weight.grad == 0)
    assert net.policy.weight.grad.abs().sum() > 0


def test_gaussian_log_prob_and_entropy_closed_forms():
    half_ln_2pi = 0.5 * math.log(2 * math.pi)  # 0.91894
    # N(1; 0, 1): -0.5 ln(2 pi) - 0.5
    assert gaussian_log_prob(torch.tensor([1.0]), torch.tensor([0.0]), torch.tensor([1.0])).item() == \
        pytest.approx(-half_ln_2pi - 0.5)
    # 2-D, summed: dim 2 is N(2; 0, 4) = -0.5 * (4/4) - 0.5 ln(8 pi) = -0.5 - 0.91894 - ln 2
    lp = gaussian_log_prob(torch.tensor([[1.0, 2.0]]), torch.zeros(1, 2), torch.tensor([[1.0, 4.0]]))
    assert lp.tolist() == pytest.approx([(-half_ln_2pi - 0.5) + (-0.5 - half_ln_2pi - math.log(2))])
    # H = 0.5 ln(2 pi e var): var 1 -> 1.41894; var 4 -> 1.41894 + ln 2
    h = gaussian_entropy(torch.tensor([[1.0, 4.0]]))
    assert h.tolist() == pytest.approx([2 * (half_ln_2pi + 0.5) + math.log(2)])


def test_a3c_continuous_loss_by_hand():
    log_n = -0.5 * math.log(2 * math.pi) - 0.5  # log N(1; 0, 1)
    ent = 0.5 * math.log(2 * math.pi * math.e)
    total, terms = a3c_continuous_loss(torch.zeros(1, 1), torch.ones(1, 1), torch.ones(1, 1), torch.tensor([3.0]),
                                       torch.tensor([1.0]))
    # A = 3 - 1 = 2: policy = -2 log N = 2.83788; value = 0.5 * 4 = 2; total = 4.83788 - 1e-4 * 1.41894
    assert terms["policy"] == pytest.approx(-2 * log_n)
    assert terms["value"] == pytest.approx(2.0)
    assert terms["entropy"] == pytest.approx(ent)
    assert total.item() == pytest.approx(-2 * log_n + 2.0 - 1e-4 * ent)


def test_exploration_epsilon_frequencies_and_annealing():
    eps = exploration_epsilons(20000, np.random.default_rng(0))
    assert set(eps.tolist()) <= {0.1, 0.01, 0.5}
    freqs = [np.mean(eps == e) for e in (0.1, 0.01, 0.5)]
    assert freqs == pytest.approx([0.4, 0.3, 0.3], abs=0.01)
    assert annealed_epsilon(0.1, 0) == 1.0
    assert annealed_epsilon(0.1, 2_000_000) == pytest.approx(0.55)  # halfway: 1 - 0.5 * 0.9
    assert annealed_epsilon(0.1, 4_000_000) == pytest.approx(0.1)
    assert annealed_epsilon(0.1, 10_000_000) == pytest.approx(0.1)


def test_policy_value_net_shapes_and_uint8_input():
    net = PolicyValueNet((4, 84, 84), 6)
    logits, value, state = net(torch.zeros(2, 4, 84, 84, dtype=torch.uint8))
    assert logits.shape == (2, 6) and value.shape == (2,) and state is None
    assert net.initial_state(2) is None
    lstm_net = PolicyValueNet((4, 84, 84), 6, lstm=True, lstm_units=32)
    logits, value, (h, c) = lstm_net(torch.full((2, 4, 84, 84), 255, dtype=torch.uint8))
    assert logits.shape == (2, 6) and value.shape == (2,) and h.shape == c.shape == (2, 32)


def test_lstm_state_is_carried():
    torch.manual_seed(0)
    net = PolicyValueNet((4,), 3, hidden=(16,), lstm=True, lstm_units=8)
    obs = torch.randn(2, 4)
    h0, c0 = net.initial_state(2)
    assert h0.shape == c0.shape == (2, 8) and not h0.any() and not c0.any()
    logits0, value0, state1 = net(obs)  # None means zeros
    logits_z, _, _ = net(obs, (h0, c0))
    assert torch.allclose(logits0, logits_z)
    logits1, value1, state2 = net(obs, state1)  # same obs, nonzero carried state -> different outputs
    assert not torch.allclose(logits0, logits1) and not torch.allclose(value0, value1)
    assert not torch.allclose(state1[0], state2[0])


def test_gaussian_net_and_factory():
    torch.manual_seed(0)
    net = GaussianPolicyValueNet(3, 2, hidden=(8,))
    mean, var, value = net(torch.randn(5, 3))
    assert mean.shape == var.shape == (5, 2) and value.shape == (5,)
    assert torch.all(var >= 1e-4)
    box = make_policy_value_net((3,), gym.spaces.Box(-1.0, 1.0, (2,)), hidden=(8,))
    assert isinstance(box, GaussianPolicyValueNet)
    disc = make_policy_value_net((4,), gym.spaces.Discrete(3), hidden=(8,), lstm=True)
    assert isinstance(disc, PolicyValueNet) and disc.lstm is not None
    assert disc(torch.zeros(1, 4))[0].shape == (1, 3)


def test_gaussian_mean_is_squashed_into_the_action_bounds_and_value_has_its_own_torso():
    net = make_policy_value_net((3,), gym.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 1.0], np.float32)), hidden=(8,))
    with torch.no_grad():
        net.mean.bias.copy_(torch.tensor([100.0, -100.0]))  # far past the bounds before the squash
        net.mean.weight.zero_()
    mean, _, value = net(torch.randn(4, 3))
    torch.testing.assert_close(mean, torch.tensor([[2.0, 0.0]] * 4))  # center + half_range * tanh(+-100)
    with torch.no_grad():
        net.mean.bias.zero_()
    torch.testing.assert_close(net(torch.randn(4, 3))[0], torch.tensor([[0.0, 0.5]] * 4))  # the centers
    # no policy parameter moves V(s): the value has its own torso
    value.sum().backward()
    assert all(p.grad is None for n, p in net.named_parameters() if not n.startswith("value"))
    unbounded = make_policy_value_net((3,), gym.spaces.Box(-np.inf, np.inf, (1,)), hidden=(8,))
    assert not unbounded.bounded


def test_a3c_terms_are_the_losss_summands():
    """a3c_terms gives each term as a tensor of its own graph: policy + value - beta * entropy is the loss."""
    logits, actions, returns, values = _a3c_batch()
    terms = a3c_terms(logits, actions, returns, values)
    assert terms["policy"].item() == pytest.approx(-0.5 * math.log(1.5))
    assert terms["value"].item() == pytest.approx(0.3125)
    (terms["policy"] + terms["value"] - 0.01 * terms["entropy"]).backward()
    assert values.grad.tolist() == pytest.approx([-0.5, 0.25])  # as a3c_loss's total gives it
