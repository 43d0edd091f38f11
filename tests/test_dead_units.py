"""bench.dead_units: the share of a ReLU layer's units that fire, on a network set by hand."""

import pytest
import torch
from torch import nn

from bench.dead_units import alive_shares, output_spread
from distrl.components.policy import Policy


def net_by_hand() -> nn.Sequential:
    # unit 0 is x0, unit 1 is -x0 - 10 (below 0 for any x0 > -10), unit 2 is x1
    first = nn.Linear(2, 3)
    with torch.no_grad():
        first.weight.copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]))
        first.bias.copy_(torch.tensor([0.0, -10.0, 0.0]))
    last = nn.Linear(3, 2)
    with torch.no_grad():
        last.weight.copy_(torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]))
        last.bias.zero_()
    return nn.Sequential(first, nn.ReLU(), last)


def test_a_unit_counts_as_alive_if_it_fires_on_one_state():
    states = torch.tensor([[1.0, -1.0], [-2.0, -3.0]])  # unit 0 fires on the first; units 1 and 2 never
    assert alive_shares(net_by_hand(), states) == {"1": pytest.approx(1 / 3)}
    # outputs: (1, 0) and (0, 0): the first output spreads by 1, the second by 0
    assert output_spread(Policy(net_by_hand()), states) == 1.0


def test_a_dead_layer_gives_one_output_everywhere():
    net = net_by_hand()
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    states = torch.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 0.5]])
    assert alive_shares(net, states) == {"1": 0.0}
    assert output_spread(Policy(net), states) == 0.0
