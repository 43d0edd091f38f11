"""R2D2's recurrent Q-network: shapes per torso, the actor's step-by-step calls agree with the learner's
unroll, and burn-in over an episode's leading padding leaves the stored state as it was."""

import pytest
import torch

from distrl.nets.recurrent_q import RecurrentQNetwork


@pytest.mark.parametrize("obs_shape", [(3,), (4, 10, 10), (4, 84, 84)])
def test_q_values_for_every_step(obs_shape):
    torch.manual_seed(0)
    net = RecurrentQNetwork(obs_shape, 5, lstm_units=16)
    obs = torch.randint(0, 2, (3, 2, *obs_shape)).to(torch.uint8 if len(obs_shape) == 3 else torch.float32)
    q, (h, c) = net(obs, torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 2))
    assert q.shape == (3, 2, 5) and h.shape == c.shape == (1, 2, 16)


def test_step_by_step_equals_the_unroll_and_the_previous_action_and_reward_count():
    torch.manual_seed(1)
    net = RecurrentQNetwork((3,), 4, lstm_units=8)
    obs, actions, rewards = torch.randn(5, 2, 3), torch.randint(0, 4, (5, 2)), torch.randn(5, 2) * 3
    q_all, state_all = net(obs, actions, rewards)
    state, steps = None, []
    for t in range(5):  # as an actor calls it
        q, state = net(obs[t:t + 1], actions[t:t + 1], rewards[t:t + 1], state)
        steps.append(q)
    assert torch.allclose(torch.cat(steps), q_all, atol=1e-6) and torch.allclose(state[0], state_all[0], atol=1e-6)
    q_other, _ = net(obs, actions, rewards + 1.0)
    assert not torch.allclose(q_other, q_all)
    q_other, _ = net(obs, (actions + 1) % 4, rewards)
    assert not torch.allclose(q_other, q_all)


def test_burn_in_keeps_the_stored_state_over_padding_and_takes_no_gradient():
    torch.manual_seed(2)
    net = RecurrentQNetwork((3,), 2, lstm_units=8)
    obs, actions, rewards = torch.randn(3, 2, 3), torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 2)
    start = (torch.randn(1, 2, 8), torch.randn(1, 2, 8))
    # column 0: two padding steps then a real one; column 1: all real
    mask = torch.tensor([[False, True], [False, True], [True, True]])
    h, c = net.burn_in(obs, actions, rewards, start, mask)
    _, (h0, c0) = net(obs[2:, :1], actions[2:, :1], rewards[2:, :1], (start[0][:, :1], start[1][:, :1]))
    assert torch.allclose(h[:, :1], h0, atol=1e-6) and torch.allclose(c[:, :1], c0, atol=1e-6)  # padding skipped
    _, (h1, _) = net(obs[:, 1:], actions[:, 1:], rewards[:, 1:], (start[0][:, 1:], start[1][:, 1:]))
    assert torch.allclose(h[:, 1:], h1, atol=1e-6)  # real steps all unrolled
    assert not h.requires_grad and not c.requires_grad
    none = net.burn_in(obs, actions, rewards, start, torch.zeros(3, 2, dtype=torch.bool))
    assert torch.equal(none[0], start[0]) and torch.equal(none[1], start[1])


def test_burn_in_groups_columns_by_span_as_a_step_by_step_unroll_would():
    torch.manual_seed(3)
    net = RecurrentQNetwork((3,), 2, lstm_units=8)
    steps, cols = 4, 6
    obs, actions, rewards = torch.randn(steps, cols, 3), torch.randint(0, 2, (steps, cols)), torch.randn(steps, cols)
    start = (torch.randn(1, cols, 8), torch.randn(1, cols, 8))
    before = (start[0].clone(), start[1].clone())
    # columns: all real, 2 leading padding steps (twice), all padding, 1 trailing, 3 leading
    mask = torch.tensor([[1, 0, 0, 0, 1, 0], [1, 0, 0, 0, 1, 0], [1, 1, 1, 0, 1, 0], [1, 1, 1, 0, 0, 1]]).bool()
    h, c = net.burn_in(obs, actions, rewards, start, mask)
    h_ref, c_ref = start
    for t in range(steps):  # one step at a time, a masked step leaving the state as it was
        _, (h_new, c_new) = net(obs[t:t + 1], actions[t:t + 1], rewards[t:t + 1], (h_ref, c_ref))
        keep = mask[t].view(1, -1, 1)
        h_ref, c_ref = torch.where(keep, h_new, h_ref), torch.where(keep, c_new, c_ref)
    assert torch.allclose(h, h_ref, atol=1e-6) and torch.allclose(c, c_ref, atol=1e-6)
    assert torch.equal(h[:, 3], start[0][:, 3])  # all padding: the stored state itself
    assert torch.equal(start[0], before[0]) and torch.equal(start[1], before[1])  # the stored state is not written to
    gap = mask.clone()
    gap[1, 0] = False  # a hole inside a column's real steps: no sequence the adder writes has one
    with pytest.raises(ValueError, match="contiguous"):
        net.burn_in(obs, actions, rewards, start, gap)
