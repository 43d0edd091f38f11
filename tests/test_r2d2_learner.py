"""R2D2's learner: the burn-in takes no gradient, the trace starts from the stored state, and a step
writes back one priority per sequence."""

import numpy as np
import torch

from distrl.architectures.r2d2.config import R2D2LearnerConfig
from distrl.components.r2d2_learner import R2D2Learner
from distrl.nets.recurrent_q import RecurrentQNetwork


def batch(b=3, burn=2, trace=3, obs_dim=4, units=8, seed=0):
    rng = np.random.default_rng(seed)
    length = burn + trace
    mask = np.ones((b, length), bool)
    mask[0, :burn] = False  # an episode's first sequence: padding where its burn-in would be
    mask[1, -1] = False  # an episode that ended one step early
    return {"obs": rng.normal(size=(b, length + 1, obs_dim)).astype(np.float32),
            "prev_action": rng.integers(0, 2, (b, length)).astype(np.float32),
            "prev_reward": rng.normal(size=(b, length)).astype(np.float32),
            "action": rng.integers(0, 2, (b, length)).astype(np.float32),
            "reward": rng.normal(size=(b, length)).astype(np.float32),
            "discount": np.full((b, length), 0.997, np.float32), "mask": mask,
            "state_h": rng.normal(size=(b, units)).astype(np.float32),
            "state_c": rng.normal(size=(b, units)).astype(np.float32)}


def learner(burn=2, trace=3, bf16=False):
    torch.manual_seed(0)
    cfg = R2D2LearnerConfig(batch_size=3, burn_in=burn, trace=trace, n_step=2, target_update=2, bf16=bf16)
    return R2D2Learner(RecurrentQNetwork((4,), 2, lstm_units=8), cfg)


def test_the_burn_in_takes_no_gradient():
    lrn, data = learner(), batch()
    seen = []
    embed = lrn.online.embed

    def recording(obs, prev_action, prev_reward):
        out = embed(obs, prev_action, prev_reward)
        seen.append((obs.shape[0], out.requires_grad))
        return out

    lrn.online.embed = recording
    metrics, priorities = lrn.step(data, np.ones(3, np.float32))
    assert seen == [(2, False), (4, True)]  # burn-in (2 steps) without, the trace and the state after it with
    assert priorities.shape == (3,) and np.all(priorities > 0) and np.isfinite(metrics["loss"])


def test_the_trace_starts_from_the_stored_state():
    lrn, data = learner(burn=0), batch(burn=0)
    data["mask"][0] = True
    _, td, q, _ = lrn._sequence_loss(data, np.ones(3, np.float32))
    obs = torch.as_tensor(data["obs"]).transpose(0, 1)
    prev_action = torch.cat([torch.as_tensor(data["prev_action"]).T, torch.as_tensor(data["action"]).T[-1:]])
    prev_reward = torch.cat([torch.as_tensor(data["prev_reward"]).T, torch.as_tensor(data["reward"]).T[-1:]])
    stored = (torch.as_tensor(data["state_h"])[None], torch.as_tensor(data["state_c"])[None])
    q_stored, _ = lrn.online(obs, prev_action, prev_reward, stored)
    q_zero, _ = lrn.online(obs, prev_action, prev_reward, None)
    assert torch.allclose(q, q_stored[:-1], atol=1e-6)
    assert not torch.allclose(q, q_zero[:-1], atol=1e-3)


def test_target_copies_and_counters():
    lrn, data = learner(), batch()
    lrn.step(data, np.ones(3, np.float32))
    assert not all(torch.equal(a, b) for a, b in zip(lrn.online.state_dict().values(), lrn.target.state_dict().values()))
    lrn.step(data, np.ones(3, np.float32))  # target_update 2
    assert all(torch.equal(a, b) for a, b in zip(lrn.online.state_dict().values(), lrn.target.state_dict().values()))
    assert lrn.counters() == {"updates": 2, "samples": 6}
    assert lrn.optimizer.defaults["eps"] == 1e-3 and lrn.optimizer.defaults["lr"] == 1e-4  # the paper's Adam


def test_bf16_runs_the_torso_and_lstm_in_bfloat16_and_keeps_q_and_the_loss_float32():
    data, weights = batch(), np.ones(3, np.float32)
    loss32, td32, q32, _ = learner()._sequence_loss(data, weights)
    half = learner(bf16=True)
    loss16, td16, q16, _ = half._sequence_loss(data, weights)
    assert q16.dtype == td16.dtype == loss16.dtype == torch.float32
    assert not torch.equal(q16, q32)  # bfloat16 arithmetic: 8 bits of mantissa
    assert torch.allclose(q16, q32, atol=0.03) and torch.allclose(loss16, loss32, rtol=0.05)
    _, priorities = half.step(data, weights)
    assert all(p.dtype == torch.float32 for p in half.online.parameters()) and np.all(np.isfinite(priorities))
