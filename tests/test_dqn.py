"""Learning-rule numbers computed by hand."""

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
