"""bench.step_floor: how much of an RMSProp step the epsilon inside the square root takes, on statistics
set by hand."""

import pytest
import torch

from bench.step_floor import eps_shares


def test_each_layer_gets_its_share_below_eps_and_its_step_against_a_normalized_one():
    # layer a: v = 0.0125 twice, 0.3; layer b: v = 0.9; eps 0.1.
    # sqrt(0.0125 / 0.1125) = 1/3, sqrt(0.3 / 0.4) = 0.8660, sqrt(0.9 / 1.0) = 0.9487
    stats = torch.tensor([0.0125, 0.3, 0.0125, 0.9])
    rows = eps_shares(stats, {"a": [3], "b": [1, 1]}, eps=0.1)
    assert rows == [
        {"layer": "a", "params": 3, "median_v": pytest.approx(0.0125), "below_eps": 0.6667, "median_step_ratio": 0.3333},
        {"layer": "b", "params": 1, "median_v": pytest.approx(0.9), "below_eps": 0.0, "median_step_ratio": 0.9487},
    ]


def test_statistics_that_do_not_fit_the_shapes_are_refused():
    with pytest.raises(ValueError, match="the shapes hold 3 parameters, the statistics 4"):
        eps_shares(torch.zeros(4), {"a": [3]}, eps=0.1)
