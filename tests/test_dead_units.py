"""bench.dead_units: the share of a ReLU layer's units that fire, and a softmax policy's entropy, on
networks set by hand."""

import math

import pytest
import torch
from torch import nn

from bench.dead_units import alive_shares, output_spread, policy_entropy, reinitialized
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


def test_an_elu_layer_is_measured_as_a_relu_one_is():
    """ELU (A3C's net.activation=elu) is 0 at 0 and below 0 under it: a unit fires where its input is above 0."""
    net = net_by_hand()
    net[1] = nn.ELU()
    assert alive_shares(net, torch.tensor([[1.0, -1.0], [-2.0, -3.0]])) == {"1": pytest.approx(1 / 3)}


def test_a_dead_layer_gives_one_output_everywhere():
    net = net_by_hand()
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    states = torch.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 0.5]])
    assert alive_shares(net, states) == {"1": 0.0}
    assert output_spread(Policy(net), states) == 0.0


class LogitsByHand(nn.Module):
    """An actor-critic's call (logits, value, recurrent state): logits (0, x0) for a state (x0, ...)."""

    def forward(self, x, state=None):
        return torch.stack([torch.zeros(len(x)), x[:, 0]], dim=1), torch.zeros(len(x), 1), None


def test_a_softmax_policy_entropy_against_the_uniform_policy():
    # logits (0, 0): probabilities 1/2, 1/2, entropy ln 2 = 0.693147; logits (0, ln 3): 1/4, 3/4, entropy
    # 0.25 ln 4 + 0.75 ln(4/3) = 0.346574 + 0.215762 = 0.562335; the mean over both states is 0.627741
    states = torch.tensor([[0.0, 5.0], [math.log(3.0), 5.0]])
    mean, uniform = policy_entropy(Policy(LogitsByHand(), kind="softmax"), states)
    assert mean == pytest.approx(0.627741, abs=1e-6) and uniform == pytest.approx(0.693147, abs=1e-6)
    assert policy_entropy(Policy(net_by_hand()), states) is None  # a Q-network's argmax has no entropy


def test_a_fresh_draw_is_torchs_default_initialization_and_leaves_the_trained_network_alone():
    trained = Policy(net_by_hand(), "softmax")
    fresh = reinitialized(trained, seed=3)
    expected = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2))
    torch.manual_seed(3)  # the same modules reset in the same order: nn.Linear(2, 3) first, then nn.Linear(3, 2)
    for m in expected.modules():
        if isinstance(m, nn.Linear):
            m.reset_parameters()
    for got, want in zip(fresh.net.parameters(), expected.parameters()):
        assert torch.equal(got, want)
    assert fresh.kind == "softmax"
    assert torch.equal(trained.net[0].bias, torch.tensor([0.0, -10.0, 0.0]))  # the trained one untouched
