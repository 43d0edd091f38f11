"""An evaluation says how far the network's outputs spread over the states it saw: 0 is a dead network."""

import numpy as np
import pytest
import torch
from torch import nn

from distrl.components.evaluator import Evaluator


class Recording(nn.Module):
    """Q = (x0, 2 x0), keeping every observation it is called on."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.0, 2.0]))
        self.seen: list[np.ndarray] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen += list(x.numpy())
        return x[:, :1] * self.scale


def test_an_evaluation_reports_its_outputs_spread_and_zero_for_one_output_everywhere():
    net = Recording()
    evaluator = Evaluator("CartPole-v1", net, episodes=2, epsilon=0.0, seed=1)
    result = evaluator.run()
    x0 = np.array([o[0] for o in net.seen])
    assert len(x0) > 10 and result["output_spread"] == pytest.approx(2 * (x0.max() - x0.min()), rel=1e-5)
    with torch.no_grad():
        net.scale.zero_()  # every output 0, whatever the state
    assert evaluator.run()["output_spread"] == 0.0
