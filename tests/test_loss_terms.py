"""bench.loss_terms: each loss term's share of A3C's update, and its push on a ReLU layer's pre-activations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from bench.loss_terms import drift_and_noise, pushes, signed_terms, term_steps
from distrl.algos.actor_critic import a3c_loss, a3c_terms
from distrl.nets.actor_critic import PolicyValueNet
from distrl.params.param_server import flat_grad, flatten
from distrl.params.shared_memory import SharedMemoryParams


@pytest.mark.parametrize("clip", [40.0, 0.05])
def test_the_terms_steps_sum_to_the_stores_update(clip):
    """The three steps, each clipped and divided as the whole gradient's update is, add up to what the shared
    store does with that gradient (clip 0.05 is below the gradient's norm: the clipped path)."""
    torch.manual_seed(0)
    net = PolicyValueNet((3,), 2, (4,))
    store = SharedMemoryParams.create(flatten(net), lr=0.01, decay=0.9, eps=0.1)
    try:
        store.push(np.full(store.size(), 0.3, dtype=np.float32))  # statistics of 0.009 a parameter
        nn.utils.vector_to_parameters(torch.as_tensor(store.pull()[0]), net.parameters())
        obs = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
        args = (torch.tensor([1, 0]), torch.tensor([1.0, -0.5]))

        def outputs():
            logits, value, _ = net(obs, None)
            return logits, args[0], args[1], value

        summands = signed_terms(a3c_terms(*outputs()), 0.01)
        steps = term_steps(net, summands, torch.as_tensor(store.state_dict()["stats"]), lr=0.01, decay=0.9, eps=0.1,
                           clip=clip)
        before = store.pull()[0]
        net.zero_grad()
        a3c_loss(*outputs())[0].backward()
        assert float(nn.utils.clip_grad_norm_(net.parameters(), clip)) > 0.05  # the gradient's norm
        store.push(flat_grad(net))
        update = torch.as_tensor(before - store.pull()[0]).double()
        # torso 0-15, policy head 16-25, value head 26-30: each head takes only its own terms' steps
        assert steps["value"][16:26].abs().sum() == 0 and steps["value"][26:].abs().sum() > 0
        assert steps["policy"][26:].abs().sum() == 0 and steps["entropy"][26:].abs().sum() == 0
        assert torch.allclose(sum(steps.values()), update, atol=1e-7)
    finally:
        store.close()
        store.unlink()


def test_a_terms_push_is_the_change_of_the_pre_activations_by_hand():
    """One ReLU unit, w = 2, b = 1, on states 1 and 3: pre-activations 3 and 7. A step of (0.5, 0.25) takes
    them to 1.5 + 0.75 = 2.25 and 4.5 + 0.75 = 5.25: a mean change of -1.25. The network is left as it was."""
    net = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
    with torch.no_grad():
        net[0].weight.fill_(2.0)
        net[0].bias.fill_(1.0)
    states = torch.tensor([[1.0], [3.0]])
    out = pushes(net, states, {"a": torch.tensor([0.5, 0.25], dtype=torch.float64),
                               "b": torch.tensor([0.0, -0.1], dtype=torch.float64)})
    assert out["a"] == {"1": pytest.approx(-1.25)}
    assert out["b"] == {"1": pytest.approx(0.1)}
    assert (net[0].weight.item(), net[0].bias.item()) == (2.0, 1.0)


def test_drift_and_noise_by_hand():
    """Three firing units over two updates: changes (1, 3), (3, 3) and (-1, -5). Their drifts are 2, 3 and -3
    (median of the sizes 3); their standard deviations sqrt(2), 0 and sqrt(8) (median sqrt(2)). A fourth unit,
    not firing, changes by 100 and is left out; a layer with no unit firing has None."""
    changes = [{"L": torch.tensor([1.0, 3.0, -1.0, 100.0]), "M": torch.tensor([1.0])},
               {"L": torch.tensor([3.0, 3.0, -5.0, -100.0]), "M": torch.tensor([2.0])}]
    out = drift_and_noise(changes, {"L": torch.tensor([True, True, True, False]), "M": torch.tensor([False])})
    drift, noise = out["L"]
    assert drift == pytest.approx(3.0)
    assert noise == pytest.approx(2 ** 0.5)
    assert out["M"] is None
