"""The Ape-X DPG acting component on a tiny deterministic env, checked by hand."""

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from distrl.components.dpg_actor import NoisyActor
from distrl.components.dpg_learner import DPGLearner
from distrl.nets.dpg import DPGActor, DPGCritic, dpg_pair
from tests.fakes import RecordingSink

torch.set_num_threads(1)


class LineEnv:
    """obs = [t], reward = -a^2, `length` steps, then terminated (or truncated); records actions."""

    def __init__(self, length=3, bound=2.0, truncate=False):
        self.length, self.truncate = length, truncate
        self.action_space = spaces.Box(-bound, bound, shape=(1,), dtype=np.float32)
        self.actions, self.closed = [], False

    def reset(self, seed=None, options=None):
        self.t, self.ret = 0, 0.0
        return np.float32([0.0]), {}

    def step(self, action):
        assert action.shape == (1,) and action.dtype == np.float32
        self.actions.append(float(action[0]))
        reward = -float(action[0]) ** 2
        self.t, self.ret = self.t + 1, self.ret + reward
        end = self.t == self.length
        info = {"episode": {"r": self.ret}} if end else {}
        return np.float32([self.t]), reward, end and not self.truncate, end and self.truncate, info

    def close(self):
        self.closed = True


class CountingSource:
    """Hands out `state` on every pull, recording the actor's frame count at each call."""

    def __init__(self, state=None):
        self.state, self.calls, self.actor = state, [], None

    def latest(self):
        self.calls.append(self.actor.frames if self.actor else 0)
        return None if self.state is None else (self.state, len(self.calls))


class LinearActor(nn.Module):
    """pi(s) = s + 0.5: actions 0.5, 1.5, 2.5 (clipped to 2) on LineEnv."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)
        with torch.no_grad():
            self.layer.weight.fill_(1.0)
            self.layer.bias.fill_(0.5)

    def forward(self, obs):
        return self.layer(obs)


def make(envs, actor, critic=None, *, source=None, **kw):
    kw = {"n_step": 2, "gamma": 0.5, "flush_size": 1000, "pull_every": 10**9, **kw}
    sink = RecordingSink()
    noisy = NoisyActor(lambda j: envs[j], actor, critic or DPGCritic(1, 1, hidden=(8, 6)), len(envs),
                       sink=sink, source=source or CountingSource(), **kw)
    return noisy, sink


def test_actions_stay_in_bounds_with_a_huge_bias():
    for sign in (1.0, -1.0):
        torch.manual_seed(0)
        actor = DPGActor(1, 1, [-50.0], [50.0], hidden=(4,))  # its own range is far wider than the env's
        with torch.no_grad():
            actor.action.bias.fill_(sign * 1e3)
        env = LineEnv(length=5)
        noisy, _ = make([env], actor)
        noisy.run(200)
        acts = np.array(env.actions)
        assert (acts >= -2.0).all() and (acts <= 2.0).all()
        assert (acts == sign * 2.0).all()  # pi = +-50, and 0.3 noise never brings it back inside


def test_noise_is_absolute_gaussian_sigma():
    torch.manual_seed(0)
    actor = DPGActor(1, 1, [-100.0], [100.0], hidden=(4,))
    with torch.no_grad():  # pi(s) = center = 0 for every state
        actor.action.weight.zero_()
        actor.action.bias.zero_()
    env = LineEnv(length=7, bound=100.0)
    noisy, _ = make([env], actor, seed=3)
    noisy.run(2000)
    acts = np.array(env.actions)
    assert len(acts) == 2000
    assert acts.std() == pytest.approx(0.3, abs=0.02)  # standard error ~0.005
    assert abs(acts.mean()) < 0.03


@pytest.mark.parametrize("truncate", [False, True])
def test_nstep_batch_by_hand(truncate):
    env = LineEnv(length=3, truncate=truncate)
    noisy, sink = make([env], LinearActor(), sigma=0.0, flush_size=3)
    noisy.run(3)
    assert len(sink.batches) == 1
    batch, priorities = sink.batches[0]
    assert set(batch) == {"obs", "action", "reward", "discount", "next_obs"}
    assert batch["action"].dtype == np.float32 and batch["action"].shape == (3, 1)
    assert batch["obs"].shape == batch["next_obs"].shape == (3, 1)
    assert batch["reward"].dtype == batch["discount"].dtype == np.float32 and priorities.shape == (3,)
    # actions 0.5, 1.5, 2 (clipped from 2.5): rewards -0.25, -2.25, -4
    assert batch["obs"][:, 0].tolist() == [0.0, 1.0, 2.0]
    assert batch["action"][:, 0].tolist() == [0.5, 1.5, 2.0]
    # R(s0) = -0.25 + 0.5 * -2.25; R(s1) = -2.25 + 0.5 * -4; R(s2) = -4 (cut short by the end)
    assert batch["reward"].tolist() == pytest.approx([-1.375, -4.25, -4.0])
    assert batch["next_obs"][:, 0].tolist() == [2.0, 3.0, 3.0]
    # a terminal ends the bootstrap; a truncation keeps gamma^k on the real final state
    assert batch["discount"].tolist() == ([0.25, 0.5 ** 2, 0.5] if truncate else [0.25, 0.0, 0.0])
    assert noisy.counters() == {"frames": 3, "steps": 3, "episodes": 1, "param_pulls": 0, "transitions_sent": 3}
    assert noisy.drain_returns() == [pytest.approx(-6.5)] and noisy.drain_returns() == []
    assert noisy.obs[0].tolist() == [0.0]  # reset after the end


def test_priorities_use_the_pulled_networks_by_hand():
    torch.manual_seed(1)
    learner = DPGLearner(DPGActor(1, 1, [-2.0], [2.0], hidden=(8, 6)), DPGCritic(1, 1, hidden=(10, 7)))
    torch.manual_seed(2)  # local copies start different: only the pull makes them agree
    envs = [LineEnv(length=3), LineEnv(length=4)]
    noisy, sink = make(envs, DPGActor(1, 1, [-2.0], [2.0], hidden=(8, 6)), DPGCritic(1, 1, hidden=(10, 7)),
                       source=learner)
    assert noisy.pulls == 1 and noisy.param_version == 0
    noisy.run(4)
    noisy.flush()
    batch, priorities = sink.batches[0]
    # env 0: 3 (its second episode's first step waits in the adder); env 1: 1 + 1, then 2 at its end
    assert len(priorities) == 7 and batch["action"].shape == (7, 1)
    obs, next_obs, action = (torch.as_tensor(batch[k]) for k in ("obs", "next_obs", "action"))
    reward, discount = torch.as_tensor(batch["reward"]), torch.as_tensor(batch["discount"])
    with torch.no_grad():
        q = learner.critic(obs, action)
        expected = (reward + discount * learner.critic(next_obs, learner.actor(next_obs)) - q).abs().numpy()
    np.testing.assert_allclose(priorities, expected, rtol=1e-5, atol=1e-6)
    terminal = batch["discount"] == 0.0
    assert terminal.sum() == 4  # the last two of each finished episode
    np.testing.assert_allclose(priorities[terminal], (reward - q).abs().numpy()[terminal], rtol=1e-5, atol=1e-6)


def test_pulls_every_pull_every_frames_and_loads_the_pair():
    torch.manual_seed(3)
    target = dpg_pair(DPGActor(1, 1, [-2.0], [2.0], hidden=(4,)), DPGCritic(1, 1, hidden=(5, 3)))
    source = CountingSource({k: v.clone() for k, v in target.state_dict().items()})
    envs = [LineEnv(length=5), LineEnv(length=5)]
    noisy, _ = make(envs, DPGActor(1, 1, [-2.0], [2.0], hidden=(4,)), DPGCritic(1, 1, hidden=(5, 3)),
                    source=source, pull_every=6)
    source.actor = noisy
    noisy.run(10)  # 2 envs: 2 frames a step, 20 in all
    assert source.calls == [0, 6, 12, 18]
    assert noisy.counters()["param_pulls"] == 4 and noisy.param_version == 4
    for mine, theirs in zip(noisy.net.parameters(), target.parameters()):
        assert torch.equal(mine, theirs)
    empty = CountingSource()  # a source with nothing new: counted calls, no loads
    noisy, _ = make([LineEnv()], LinearActor(), source=empty, pull_every=3)
    empty.actor = noisy
    noisy.run(7)
    assert empty.calls == [0, 3, 6] and noisy.pulls == 0 and noisy.param_version == -1
    noisy.close()
    assert noisy.envs[0].closed
