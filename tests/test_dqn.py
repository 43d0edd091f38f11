"""Learning-rule numbers computed by hand."""

import copy

import numpy as np
import pytest
import torch

from distrl.algos.dqn import double_q_targets, nstep_td_priorities, q_targets, td_loss
from distrl.components.actor import apex_epsilons
from distrl.nets import DuelingHead, make_q_network


def test_double_q_target_uses_online_argmax_and_target_value():
    reward = torch.tensor([1.0, 0.5])
    discount = torch.tensor([0.9, 0.0])  # second transition ended in a terminal
    q_next_online = torch.tensor([[3.0, 1.0], [2.0, 1.0]])
    q_next_target = torch.tensor([[10.0, 20.0], [30.0, 40.0]])
    # row 0: online argmax is action 0 -> target value 10 -> 1 + 0.9 * 10 = 10 (max would give 19)
    assert double_q_targets(reward, discount, q_next_online, q_next_target).tolist() == pytest.approx([10.0, 0.5])
    assert q_targets(reward, discount, q_next_target).tolist() == pytest.approx([19.0, 0.5])


def test_td_loss_half_squared_weighted_mean_and_errors():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss, td = td_loss(q, torch.tensor([1, 0]), torch.tensor([3.0, 1.0]), torch.tensor([1.0, 0.5]))
    # q(s,a) = [2, 3]; td = [1, -2]; 0.5 td^2 = [0.5, 2]; weighted [0.5, 1]; mean 0.75
    assert loss.item() == pytest.approx(0.75)
    assert td.tolist() == pytest.approx([1.0, -2.0])
    loss.backward()  # d loss / d q(s,a) = -w * td / batch
    assert q.grad.flatten().tolist() == pytest.approx([0.0, -0.5, 0.5, 0.0])


def test_huber_loss_is_linear_beyond_one():
    q = torch.tensor([[0.0]])
    loss, _ = td_loss(q, torch.tensor([0]), torch.tensor([3.0]), kind="huber")
    assert float(loss) == pytest.approx(2.5)  # |3| - 0.5


def test_actor_priorities_from_buffered_q_values():
    p = nstep_td_priorities(np.array([[1.0, 2.0], [0.0, 5.0]]), np.array([1, 1]), np.array([1.0, 1.0]),
                            np.array([0.5, 0.0]), np.array([[4.0, 0.0], [9.0, 9.0]]))
    # |1 + 0.5 * 4 - 2| = 1 ; terminal: |1 + 0 - 5| = 4
    assert p.tolist() == pytest.approx([1.0, 4.0])


def test_dueling_aggregation_subtracts_mean_advantage():
    q = DuelingHead.aggregate(torch.tensor([[1.0]]), torch.tensor([[1.0, 2.0, 3.0]]))
    assert q.tolist() == [[0.0, 1.0, 2.0]]


def test_apex_epsilons_follow_the_paper_formula():
    eps = apex_epsilons(3)
    assert eps == pytest.approx([0.4, 0.4 ** 4.5, 0.4 ** 8])
    assert apex_epsilons(1) == [0.4]


def test_networks_shapes_and_uint8_input():
    net = make_q_network((4, 84, 84), 6)
    assert net(torch.zeros(2, 4, 84, 84, dtype=torch.uint8)).shape == (2, 6)
    assert make_q_network((4,), 2, hidden=(16,))(torch.zeros(3, 4)).shape == (3, 2)


def test_loss_outlier_filter_drops_beyond_mean_plus_k_std():
    from distrl.components.learner import LossOutlierFilter
    f = LossOutlierFilter(k=2.0, warmup=4)
    assert all(f.accept(x) for x in [1.0, 3.0, 1.0, 3.0])  # warm-up: always accepted
    # mean 2, sample std sqrt(4/3) = 1.1547 -> threshold 2 + 2 * 1.1547 = 4.309
    assert f.accept(4.3) and f.dropped == 0
    assert not f.accept(-100.0)  # |loss| is what is compared
    assert f.dropped == 1 and f.count == 6


def test_learner_grads_match_the_step_it_would_take():
    from distrl import config as C
    from distrl.components.learner import DQNLearner
    cfg = C.build_config("apex", "CartPole-v1")
    torch.manual_seed(0)
    learner = DQNLearner(make_q_network((4,), 2, hidden=(8,)), cfg.learner)
    rng = np.random.default_rng(0)
    batch = {"obs": rng.normal(size=(5, 4)).astype(np.float32), "next_obs": rng.normal(size=(5, 4)).astype(np.float32),
             "action": rng.integers(0, 2, 5), "reward": np.ones(5, np.float32), "discount": np.full(5, 0.9, np.float32)}
    flat, loss, td = learner.grads(batch, np.ones(5, np.float32))
    assert flat.shape == (sum(p.numel() for p in learner.online.parameters()),)
    metrics, priorities = learner.step(batch, np.ones(5, np.float32))  # grads are taken before the update
    expected = torch.cat([p.grad.reshape(-1) for p in learner.online.parameters()]).numpy()
    np.testing.assert_allclose(flat, expected, rtol=1e-6)
    assert loss == pytest.approx(metrics["loss"]) and td == pytest.approx(priorities)


@pytest.mark.parametrize("dueling", [True, False])
def test_bf16_runs_the_hidden_layers_in_bfloat16_and_keeps_q_targets_and_parameters_float32(dueling):
    from distrl import config as C
    from distrl.components.learner import DQNLearner
    cfg = C.build_config("apex", "ALE/Pong-v5")
    torch.manual_seed(0)
    net = make_q_network((4, 84, 84), 6, dueling=dueling)
    full = DQNLearner(net, cfg.learner)
    half = DQNLearner(copy.deepcopy(net), cfg.learner, bf16=True)
    rng = np.random.default_rng(0)
    batch = {"obs": rng.integers(0, 256, (8, 4, 84, 84), dtype=np.uint8),
             "next_obs": rng.integers(0, 256, (8, 4, 84, 84), dtype=np.uint8), "action": rng.integers(0, 6, 8),
             "reward": np.ones(8, np.float32), "discount": np.full(8, 0.97, np.float32)}
    obs = torch.as_tensor(batch["obs"])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q16 = half.online(obs)
    q32 = full.online(obs)
    assert q16.dtype == torch.float32  # the output layers ran in float32
    assert not torch.equal(q16, q32) and torch.allclose(q16, q32, atol=0.01)  # the hidden layers did not
    _, p32 = full.step(batch, np.ones(8, np.float32))
    _, p16 = half.step(batch, np.ones(8, np.float32))
    assert not np.array_equal(p16, p32) and np.allclose(p16, p32, atol=0.02)
    assert all(p.dtype == torch.float32 for p in half.online.parameters())


def test_channels_last_is_the_same_step_with_nhwc_conv_weights_that_load_into_a_plain_network():
    """learner.channels_last (issue 59): oneDNN's layout for the learner's convolutions changes the strides of
    its weights, not the rule: the same priorities and parameters as NCHW, and its parameters (what actors pull
    and checkpoints keep) load into an NCHW network as they are."""
    from distrl import config as C
    from distrl.architectures.replay_fed import q_learner
    from distrl.components.learner import DQNLearner
    cfg = C.build_config("apex", "ALE/Pong-v5", overrides={"learner.channels_last": True, "learner.target_update": 1})
    torch.manual_seed(0)
    net = make_q_network((4, 84, 84), 6)
    plain = DQNLearner(copy.deepcopy(net), cfg.learner)
    nhwc = q_learner(cfg, net, "cpu")  # the builder's path passes the key
    conv = nhwc.online.torso.body[0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last) and not conv.is_contiguous()
    assert nhwc.target.torso.body[0].weight.is_contiguous(memory_format=torch.channels_last)
    rng = np.random.default_rng(0)
    batch = {"obs": rng.integers(0, 256, (8, 4, 84, 84), dtype=np.uint8),
             "next_obs": rng.integers(0, 256, (8, 4, 84, 84), dtype=np.uint8), "action": rng.integers(0, 6, 8),
             "reward": np.ones(8, np.float32), "discount": np.full(8, 0.97, np.float32)}
    for _ in range(2):  # the second step bootstraps from targets copied after the first (target_update 1)
        _, p_plain = plain.step(batch, np.ones(8, np.float32))
        _, p_nhwc = nhwc.step(batch, np.ones(8, np.float32))
        np.testing.assert_allclose(p_nhwc, p_plain, rtol=1e-4, atol=1e-5)
    for a, b in zip(plain.online.parameters(), nhwc.online.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-6)
    fresh = make_q_network((4, 84, 84), 6)
    fresh.load_state_dict(nhwc.online.state_dict())
    obs = torch.as_tensor(batch["obs"])
    torch.testing.assert_close(fresh(obs), nhwc.online(obs))


def test_a_resumed_learner_keeps_its_own_adam_kernel_and_the_checkpoints_moments():
    """learner.fused_adam on --resume (issue 59): torch's load_state_dict restores the saved groups' `fused`,
    so a resumed run would have kept the kernel it was saved with. The moments and step count still load,
    and the next step is the unfused learner's."""
    from distrl import config as C
    from distrl.components.learner import DQNLearner
    torch.manual_seed(0)
    net = make_q_network((4, 10, 10), 3)
    cfg = C.build_config("apex", "MinAtar/Breakout-v1", overrides={"learner.target_update": 1000})
    fused_cfg = C.build_config("apex", "MinAtar/Breakout-v1",
                               overrides={"learner.target_update": 1000, "learner.fused_adam": True})
    rng = np.random.default_rng(0)
    batch = {"obs": rng.random((8, 4, 10, 10), dtype=np.float32),
             "next_obs": rng.random((8, 4, 10, 10), dtype=np.float32), "action": rng.integers(0, 3, 8),
             "reward": np.ones(8, np.float32), "discount": np.full(8, 0.97, np.float32)}
    saved = DQNLearner(copy.deepcopy(net), cfg.learner)
    saved.step(batch, np.ones(8, np.float32))
    resumed = DQNLearner(copy.deepcopy(net), fused_cfg.learner)
    resumed.load_state_dict(copy.deepcopy(saved.state_dict()))
    assert resumed.optimizer.param_groups[0]["fused"] is True
    assert float(next(iter(resumed.optimizer.state.values()))["step"]) == 1.0
    saved.step(batch, np.ones(8, np.float32))
    resumed.step(batch, np.ones(8, np.float32))
    for a, b in zip(saved.online.parameters(), resumed.online.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
