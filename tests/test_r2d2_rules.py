"""R2D2's learning rules against numbers computed by hand (Kapturowski et al. 2019, Pohlen et al. 2018)."""

import math

import torch

from distrl.algos.r2d2 import (
    inverse_value_rescale,
    rescaled_nstep_targets,
    sequence_loss,
    sequence_priorities,
    sequence_td_errors,
    value_rescale,
)


def h(x: float) -> float:
    return math.copysign(math.sqrt(abs(x) + 1) - 1, x) + 1e-3 * x


def test_value_rescale_by_hand():
    # h(3) = (sqrt(4) - 1) + 0.003; h(-8) = -(sqrt(9) - 1) - 0.008; h(0) = 0
    got = value_rescale(torch.tensor([3.0, -8.0, 0.0], dtype=torch.float64))
    assert torch.allclose(got, torch.tensor([1.003, -2.008, 0.0], dtype=torch.float64))


def test_inverse_value_rescale_undoes_it():
    x = torch.tensor([-1e4, -37.5, -1.0, -1e-3, 0.0, 1e-3, 0.5, 21.0, 1e5], dtype=torch.float64)
    assert torch.allclose(inverse_value_rescale(value_rescale(x)), x, rtol=1e-9, atol=1e-9)
    assert torch.allclose(inverse_value_rescale(torch.tensor([1.003, -2.008], dtype=torch.float64)),
                          torch.tensor([3.0, -8.0], dtype=torch.float64))


def test_nstep_targets_through_the_rescaling_by_hand():
    # n = 2, gamma 0.5, rewards 1, 2, 3; the bootstraps are h(4), h(8), h(12) (what the net outputs).
    rewards = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    discounts = torch.full((3, 1), 0.5, dtype=torch.float64)
    bootstrap = value_rescale(torch.tensor([[4.0], [8.0], [12.0]], dtype=torch.float64))
    got = rescaled_nstep_targets(rewards, discounts, bootstrap, n=2)
    # t=0: 1 + 0.5*2 + 0.25*8 = 4; t=1: 2 + 0.5*3 + 0.25*12 = 6.5; t=2, the sequence's end: 3 + 0.5*12 = 9
    assert torch.allclose(got[:, 0], torch.tensor([h(4.0), h(6.5), h(9.0)], dtype=torch.float64))
    assert abs(h(4.0) - 1.240068) < 1e-6 and abs(h(6.5) - 1.745113) < 1e-6 and abs(h(9.0) - 2.171278) < 1e-6


def test_nstep_targets_stop_at_an_episode_end():
    # the episode ends on step 0 (discount 0): its target is its reward alone; step 1 goes on as before
    rewards = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], dtype=torch.float64)
    discounts = torch.tensor([[0.0, 0.5], [0.5, 0.0], [0.5, 0.5]], dtype=torch.float64)
    bootstrap = value_rescale(torch.tensor([[4.0, 4.0], [8.0, 8.0], [12.0, 12.0]], dtype=torch.float64))
    got = rescaled_nstep_targets(rewards, discounts, bootstrap, n=3)
    # column 0: t=0: 1; t=1: 2 + 0.5*3 + 0.25*12 = 6.5; t=2: 3 + 0.5*12 = 9
    # column 1 (end on step 1): t=0: 1 + 0.5*2 = 2; t=1: 2; t=2: 9
    want = torch.tensor([[h(1.0), h(2.0)], [h(6.5), h(2.0)], [h(9.0), h(9.0)]], dtype=torch.float64)
    assert torch.allclose(got, want)
    assert not got.requires_grad


def test_a_horizon_longer_than_the_sequence():
    rewards = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
    discounts = torch.full((2, 1), 0.5, dtype=torch.float64)
    bootstrap = value_rescale(torch.tensor([[2.0], [6.0]], dtype=torch.float64))
    got = rescaled_nstep_targets(rewards, discounts, bootstrap, n=5)
    # t=0: 1 + 0.5*1 + 0.25*6 = 3; t=1: 1 + 0.5*6 = 4
    assert torch.allclose(got[:, 0], torch.tensor([h(3.0), h(4.0)], dtype=torch.float64))


def test_sequence_priority_mixes_max_and_mean():
    td = torch.tensor([[1.0, 0.0], [-3.0, 0.5], [2.0, -0.5]])
    # column 0: 0.9*3 + 0.1*2 = 2.9; column 1: 0.9*0.5 + 0.1*(1/3)
    assert torch.allclose(sequence_priorities(td), torch.tensor([2.9, 0.45 + 0.1 / 3]))


def double_q_case(steps_mask, discounts):
    """q_online picks the bootstrap action, q_target values it: rows are s_0, s_1, s_2 (and a padding row)."""
    q_online = torch.tensor([[[0.5, 0.2]], [[0.1, 0.9]], [[0.7, 0.3]], [[9.0, 9.0]]], dtype=torch.float64)
    q_target = torch.tensor([[[0.0, 0.0]], [[h(2), h(4)]], [[h(6), h(10)]], [[h(100), h(100)]]], dtype=torch.float64)
    steps = len(steps_mask)
    return sequence_td_errors(q_online[:steps + 1], q_target[:steps + 1], torch.tensor([[0], [1], [0]][:steps]),
                              torch.tensor([[1.0], [1.0], [0.0]][:steps], dtype=torch.float64),
                              torch.tensor([[d] for d in discounts], dtype=torch.float64),
                              torch.tensor([[m] for m in steps_mask]), n=len(steps_mask))


def test_sequence_td_errors_by_hand():
    # argmax of q_online at s_1 is action 1 -> target value h(4) -> 4; at s_2 action 0 -> h(6) -> 6.
    # n = 2, gamma 0.5: t=0: 1 + 0.5*1 + 0.25*6 = 3; t=1 (the sequence's end): 1 + 0.5*6 = 4.
    td = double_q_case([True, True], [0.5, 0.5])
    assert torch.allclose(td[:, 0], torch.tensor([h(3) - 0.5, h(4) - 0.9], dtype=torch.float64))


def test_a_truncation_before_the_padding_still_bootstraps():
    # the episode is cut (not terminated) after step 1: step 2 is padding (stored discount 0, reward 0);
    # the sums go through it to the value of s_2, as if the sequence had ended there
    td = double_q_case([True, True, False], [0.5, 0.5, 0.0])
    assert torch.allclose(td[:, 0], torch.tensor([h(3) - 0.5, h(4) - 0.9, 0.0], dtype=torch.float64))
    # a terminal at step 1 instead: t=0: 1 + 0.5*1 = 1.5; t=1: 1
    td = double_q_case([True, True, False], [0.5, 0.0, 0.0])
    assert torch.allclose(td[:, 0], torch.tensor([h(1.5) - 0.5, h(1.0) - 0.9, 0.0], dtype=torch.float64))


def test_sequence_loss_and_masked_priority_by_hand():
    td = torch.tensor([[0.5], [-0.25], [7.0]])
    mask = torch.tensor([[True], [True], [False]])
    # 1/2 (0.25 + 0.0625) / 2 real steps, weight 2
    assert torch.isclose(sequence_loss(td, mask, torch.tensor([2.0])), torch.tensor(0.3125 / 2))
    # 0.9 * 0.5 + 0.1 * (0.75 / 2): the padding's 7 counts in neither
    assert torch.isclose(sequence_priorities(td, mask)[0], torch.tensor(0.45 + 0.0375))
    q = torch.zeros(3, 1, 2, requires_grad=True)
    errors = sequence_td_errors(q, q + 1.0, torch.zeros(2, 1), torch.ones(2, 1), torch.full((2, 1), 0.5),
                                torch.ones(2, 1, dtype=torch.bool), n=1)
    errors.sum().backward()
    assert q.grad[:2, 0, 0].tolist() == [-1.0, -1.0] and q.grad[2].abs().sum() == 0  # only Q(s_t, a_t) learns
