"""R2D2's learning rules against numbers computed by hand (Kapturowski et al. 2019, Pohlen et al. 2018)."""

import math

import torch

from distrl.algos.r2d2 import inverse_value_rescale, rescaled_nstep_targets, sequence_priorities, value_rescale


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
