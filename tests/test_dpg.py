"""Ape-X DPG learning rules, networks and learner (Horgan et al. 2018, appendix D), checked by hand."""

import copy
import math

import numpy as np
import pytest
import torch
from torch import nn

from distrl.algos.dpg import dpg_actor_loss, dpg_critic_loss, dpg_critic_targets
from distrl.components.dpg_learner import DPGLearner
from distrl.nets.dpg import DPGActor, DPGCritic, dpg_pair

torch.set_num_threads(1)


def test_critic_target_nstep_bootstrap_and_terminal():
    reward = torch.tensor([1.5, 1.5])
    discount = torch.tensor([0.9 ** 3, 0.0])  # 3-step, and one cut short by a terminal
    next_q = torch.tensor([10.0, 10.0], requires_grad=True)
    target = dpg_critic_targets(reward, discount, next_q)
    # 1.5 + 0.729 * 10 = 8.79 ; terminal: 1.5 + 0 = 1.5
    assert target.tolist() == pytest.approx([8.79, 1.5])
    assert not target.requires_grad


def test_critic_loss_weighted_half_squared_and_td():
    q = torch.tensor([1.0, 2.0], requires_grad=True)
    loss, td = dpg_critic_loss(q, torch.tensor([3.0, 1.0]), torch.tensor([1.0, 0.5]))
    # td = [2, -1]; 0.5 td^2 = [2, 0.5]; weighted [2, 0.25]; mean 1.125
    assert loss.item() == pytest.approx(1.125)
    assert td.tolist() == pytest.approx([2.0, -1.0]) and not td.requires_grad
    loss.backward()  # d loss / d q = -w * td / batch = [-1, 0.25]
    assert q.grad.tolist() == pytest.approx([-1.0, 0.25])


class BiasActor(nn.Module):
    """pi(s) = b, the same action for every state: the parameters are the action itself."""

    def __init__(self, action_dim: int = 1):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(action_dim))

    def forward(self, obs):
        return self.bias.expand(obs.shape[0], -1)


class ParabolaCritic(nn.Module):
    """q(s, a) = -sum_i (a_i - c_i)^2: the best action is c (default 0.7)."""

    def __init__(self, c=(0.7,)):
        super().__init__()
        self.c = nn.Parameter(torch.tensor(c))

    def forward(self, obs, action):
        return -((action - self.c) ** 2).sum(dim=1)


def test_actor_loss_gradient_moves_the_action_toward_higher_q():
    actor, critic = BiasActor(), ParabolaCritic()
    obs = torch.zeros(4, 1)
    loss = dpg_actor_loss(critic(obs, actor(obs)))
    loss.backward()
    # loss = (b - 0.7)^2, d/db = 2 (b - 0.7) = -1.4 at b = 0: descent raises b toward 0.7
    assert actor.bias.grad.item() == pytest.approx(-1.4)
    opt = torch.optim.SGD(actor.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        dpg_actor_loss(critic(obs, actor(obs))).backward()
        opt.step()
    # b <- b + 0.2 (0.7 - b): 0.14, 0.252, 0.3416
    assert actor.bias.item() == pytest.approx(0.3416)


def test_elementwise_clipping_is_not_norm_clipping():
    p = nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([5.0, -0.3, -2.0])
    nn.utils.clip_grad_value_([p], 1.0)  # what DPGLearner applies to the actor
    assert p.grad.tolist() == pytest.approx([1.0, -0.3, -1.0])
    # norm clipping to 1 would have rescaled all three by 1 / |g| = 1 / 5.39 instead
    norm = math.sqrt(25 + 0.09 + 4)
    assert p.grad.tolist() != pytest.approx([5.0 / norm, -0.3 / norm, -2.0 / norm])


@pytest.mark.parametrize("fused", [False, True])  # torch's fused Adam kernel takes the same steps
def test_learner_actor_step_on_toy_critic_is_clipped_and_leaves_critic_alone(fused):
    learner = DPGLearner(BiasActor(2), ParabolaCritic((0.7, -0.35)), lr=0.1, target_update=100, fused=fused)
    assert learner.actor_optimizer.defaults["fused"] is (True if fused else None)
    # batch action = c, reward 0, terminal: target 0 = q(s, c), so td = 0 and the critic's
    # gradient is 0; any change to c would have to come from the actor loss.
    batch = {"obs": np.zeros((4, 1), np.float32), "next_obs": np.zeros((4, 1), np.float32),
             "action": np.tile(np.float32([0.7, -0.35]), (4, 1)), "reward": np.zeros(4, np.float32),
             "discount": np.zeros(4, np.float32)}
    for step, expected in enumerate((0.1, 0.2, 0.3)):
        _, priorities = learner.step(batch, np.ones(4, np.float32))
        if step == 0:
            # raw gradient 2 (b - c) = [-1.4, 0.7]: element-wise clipping gives [-1, 0.7];
            # clipping the norm (1.565) to 1 would have given [-0.894, 0.447]
            assert learner.actor.bias.grad.tolist() == pytest.approx([-1.0, 0.7])
        # the first action's raw gradients -1.4, -1.2, -1.0 all clip to -1; Adam's step on a
        # constant gradient is exactly lr, so it climbs 0.1 per step toward 0.7
        assert learner.actor.bias.grad[0].item() == pytest.approx(-1.0)
        assert learner.actor.bias[0].item() == pytest.approx(expected, abs=1e-6)
        assert priorities.tolist() == pytest.approx([0.0] * 4, abs=1e-6)
    assert -0.35 < learner.actor.bias[1].item() < 0.0  # the second went down toward -0.35
    assert learner.critic.c.tolist() == pytest.approx([0.7, -0.35], abs=1e-7)


def test_actor_bounds_and_center():
    actor = DPGActor(3, 2, low=[-2.0, 0.0], high=[2.0, 1.0], hidden=(8, 6))
    extreme = torch.tensor([[1e6, -1e6, 1e6], [-1e6, 1e6, -1e6], [0.0, 0.0, 0.0]])
    for _ in range(3):  # random weights: outputs land anywhere inside, never outside
        with torch.no_grad():
            for p in actor.parameters():
                p.normal_(0.0, 10.0)
        a = actor(extreme)
        assert a.shape == (3, 2)
        assert (a >= torch.tensor([-2.0, 0.0])).all() and (a <= torch.tensor([2.0, 1.0])).all()
    with torch.no_grad():
        actor.action.weight.zero_()
        actor.action.bias.zero_()
    assert actor(extreme).tolist() == [[0.0, 0.5]] * 3
    default = DPGActor(3, 2, [-1, -1], [1, 1])
    assert [m.out_features for m in default.modules() if isinstance(m, nn.Linear)] == [300, 200, 2]


def test_critic_shape_and_default_widths():
    critic = DPGCritic(3, 2)
    assert critic(torch.zeros(5, 3), torch.zeros(5, 2)).shape == (5,)
    assert critic(torch.zeros(5, 1, 3), torch.zeros(5, 2)).shape == (5,)  # observations are flattened
    assert [(m.in_features, m.out_features) for m in critic.modules() if isinstance(m, nn.Linear)] == [
        (3, 400), (402, 300), (300, 1)]


def small_learner(seed: int, target_update: int = 3, lr: float = 1e-2, bf16: bool = False) -> DPGLearner:
    torch.manual_seed(seed)
    return DPGLearner(DPGActor(3, 2, [-1.0, -2.0], [1.0, 2.0], hidden=(8, 6)), DPGCritic(3, 2, hidden=(10, 7)),
                      lr=lr, target_update=target_update, bf16=bf16)


def random_batch(rng: np.random.Generator, size: int = 5) -> dict[str, np.ndarray]:
    return {"obs": rng.normal(size=(size, 3)).astype(np.float32),
            "next_obs": rng.normal(size=(size, 3)).astype(np.float32),
            "action": rng.uniform(-1, 1, size=(size, 2)).astype(np.float32),
            "reward": rng.normal(size=size).astype(np.float32),
            "discount": np.array([0.99 ** 3, 0.0, 0.99 ** 2, 0.99 ** 3, 0.99 ** 3][:size], np.float32)}


def params(module: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def test_learner_step_matches_a_hand_replay():
    learner = small_learner(0)
    batch, weights = random_batch(np.random.default_rng(0)), np.array([1.0, 0.5, 0.2, 1.0, 0.8], np.float32)
    actor, critic = copy.deepcopy(learner.actor), copy.deepcopy(learner.critic)
    obs, next_obs, action = (torch.as_tensor(batch[k]) for k in ("obs", "next_obs", "action"))
    with torch.no_grad():  # targets equal the online networks before the first refresh
        target = torch.as_tensor(batch["reward"]) + torch.as_tensor(batch["discount"]) * critic(next_obs, actor(next_obs))
        expected_priorities = (target - critic(obs, action)).abs().numpy()
    # the critic's own update, by hand
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
    (0.5 * (target - critic(obs, action)) ** 2 * torch.as_tensor(weights)).mean().backward()
    critic_opt.step()
    critic_grads = [p.grad.clone() for p in critic.parameters()]
    # the actor's update against the updated critic, clipped element-wise
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-2)
    (-critic(obs, actor(obs)).mean()).backward()
    nn.utils.clip_grad_value_(actor.parameters(), 1.0)
    actor_opt.step()

    metrics, priorities = learner.step(batch, weights)
    assert priorities.shape == (5,)
    np.testing.assert_allclose(priorities, expected_priorities, rtol=1e-5, atol=1e-6)
    # the critic moved by its own loss only, and the actor loss left nothing in its gradients
    for mine, theirs, grad in zip(learner.critic.parameters(), critic.parameters(), critic_grads):
        torch.testing.assert_close(mine, theirs)
        torch.testing.assert_close(mine.grad, grad)
    for mine, theirs in zip(learner.actor.parameters(), actor.parameters()):
        torch.testing.assert_close(mine, theirs)
    assert set(metrics) == {"critic_loss", "actor_loss", "q_mean"}


def test_targets_refresh_exactly_every_target_update_steps():
    learner = small_learner(1, target_update=3)
    rng = np.random.default_rng(1)
    initial_actor, initial_critic = params(learner.actor_target), params(learner.critic_target)
    for update in (1, 2):
        batch = random_batch(rng)
        obs, next_obs, action = (torch.as_tensor(batch[k]) for k in ("obs", "next_obs", "action"))
        with torch.no_grad():  # the bootstrap comes from the (stale, from update 1 on) targets
            next_q = learner.critic_target(next_obs, learner.actor_target(next_obs))
            expected = (torch.as_tensor(batch["reward"]) + torch.as_tensor(batch["discount"]) * next_q
                        - learner.critic(obs, action)).abs().numpy()
        _, priorities = learner.step(batch, np.ones(5, np.float32))
        np.testing.assert_allclose(priorities, expected, rtol=1e-5, atol=1e-6)
        assert learner.updates == update
        for now, before in zip(params(learner.actor_target) + params(learner.critic_target),
                               initial_actor + initial_critic):
            assert torch.equal(now, before)
        assert not torch.equal(params(learner.actor)[0], initial_actor[0])  # the online ones did move
    learner.step(random_batch(rng), np.ones(5, np.float32))
    for target, online in ((learner.actor_target, learner.actor), (learner.critic_target, learner.critic)):
        for now, source in zip(params(target), params(online)):
            assert torch.equal(now, source)
    state, version = learner.latest()
    assert version == 3 and set(state) == {f"actor.{k}" for k in learner.actor.state_dict()} | {
        f"critic.{k}" for k in learner.critic.state_dict()}
    pair = dpg_pair(copy.deepcopy(learner.actor), copy.deepcopy(learner.critic))
    with torch.no_grad():  # scramble, then load: the pulled state restores both networks exactly
        for p in pair.parameters():
            p.add_(1.0)
    pair.load_state_dict(state)
    for mine, theirs in zip(pair.parameters(), list(learner.actor.parameters()) + list(learner.critic.parameters())):
        assert torch.equal(mine, theirs)
    assert all(v.device.type == "cpu" for v in state.values())


def test_state_dict_round_trip_with_weights_only(tmp_path):
    learner = small_learner(2, target_update=2)
    rng = np.random.default_rng(2)
    for _ in range(3):  # targets refreshed once, then online moved past them; Adam has state
        learner.step(random_batch(rng), np.ones(5, np.float32))
    torch.save(learner.state_dict(), tmp_path / "dpg.pt")
    other = small_learner(3, target_update=2)
    other.load_state_dict(torch.load(tmp_path / "dpg.pt", weights_only=True))
    assert other.updates == 3 and other.samples == 15
    obs, action = torch.randn(4, 3), torch.rand(4, 2)
    for a, b in ((learner.actor, other.actor), (learner.actor_target, other.actor_target)):
        torch.testing.assert_close(a(obs), b(obs), rtol=0, atol=0)
    for a, b in ((learner.critic, other.critic), (learner.critic_target, other.critic_target)):
        torch.testing.assert_close(a(obs, action), b(obs, action), rtol=0, atol=0)
    batch = random_batch(rng)  # and the next step agrees too: optimizer state came along
    _, p1 = learner.step(batch, np.ones(5, np.float32))
    _, p2 = other.step(batch, np.ones(5, np.float32))
    np.testing.assert_array_equal(p1, p2)
    for a, b in zip(learner.actor.parameters(), other.actor.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_bf16_keeps_outputs_targets_and_parameters_float32_and_stays_close():
    batch, weights = random_batch(np.random.default_rng(1)), np.ones(5, np.float32)
    full, half = small_learner(0), small_learner(0, bf16=True)
    obs, action = torch.as_tensor(batch["obs"]), torch.as_tensor(batch["action"])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q16, a16 = half.critic(obs, action), half.actor(obs)
    q32, a32 = full.critic(obs, action), full.actor(obs)
    assert q16.dtype == a16.dtype == torch.float32  # the output layers ran in float32
    assert not torch.equal(q16, q32) and torch.allclose(q16, q32, atol=0.02)  # the hidden layers did not
    assert torch.allclose(a16, a32, atol=0.02)
    _, p32 = full.step(batch, weights)
    _, p16 = half.step(batch, weights)
    np.testing.assert_allclose(p16, p32, atol=0.03)
    assert all(p.dtype == torch.float32 for p in [*half.actor.parameters(), *half.critic.parameters()])
