"""TD3's options on the Ape-X DPG learner (Fujimoto et al. 2018): Polyak targets, clipped double Q,
target policy smoothing and delayed actor updates, checked against numbers computed by hand."""

import numpy as np
import pytest
import torch
from torch import nn

from distrl.algos.dpg import polyak_update, smoothed_target_action
from distrl.components.dpg_learner import DPGLearner
from distrl.nets.dpg import DPGActor, DPGCritic

torch.set_num_threads(1)


def test_smoothed_target_action_clips_the_noise_then_the_action():
    action = torch.tensor([[0.9, -0.2], [0.0, 0.0]])
    noise = torch.tensor([[0.8, -0.1], [-0.7, 0.3]])
    out = smoothed_target_action(action, noise, 0.5, torch.tensor([-1.0, -1.0]), torch.tensor([1.0, 0.25]))
    # 0.9 + clip(0.8) = 1.4 -> bound 1.0; -0.2 - 0.1 = -0.3; 0 + clip(-0.7) = -0.5; 0 + 0.3 -> bound 0.25
    assert out.flatten().tolist() == pytest.approx([1.0, -0.3, -0.5, 0.25])


def test_polyak_update_moves_tau_of_the_way():
    target, online = nn.Linear(1, 1), nn.Linear(1, 1)
    with torch.no_grad():
        target.weight.fill_(0.0), target.bias.fill_(0.0), online.weight.fill_(1.0), online.bias.fill_(2.0)
    polyak_update(target, online, 0.25)
    assert (target.weight.item(), target.bias.item()) == pytest.approx((0.25, 0.5))
    polyak_update(target, online, 0.25)  # 0.25 + 0.25 (1 - 0.25) = 0.4375; 0.5 + 0.25 (2 - 0.5) = 0.875
    assert (target.weight.item(), target.bias.item()) == pytest.approx((0.4375, 0.875))
    assert online.weight.item() == 1.0


class ConstCritic(nn.Module):
    """q(s, a) = k - (a - 0.7)^2 with k learnable: the best action is 0.7 whatever k is."""

    def __init__(self, k: float):
        super().__init__()
        self.k = nn.Parameter(torch.tensor(k))

    def forward(self, obs, action):
        return self.k - ((action - 0.7) ** 2).sum(dim=1)


class BiasActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, obs):
        return self.bias.expand(obs.shape[0], -1)


def batch(n: int = 2) -> dict[str, np.ndarray]:
    return {"obs": np.zeros((n, 1), np.float32), "next_obs": np.zeros((n, 1), np.float32),
            "action": np.zeros((n, 1), np.float32), "reward": np.full(n, 1.0, np.float32),
            "discount": np.full(n, 0.5, np.float32)}


def test_twin_critics_bootstrap_from_the_smaller_target_and_both_learn():
    learner = DPGLearner(BiasActor(), ConstCritic(4.0), critic2=ConstCritic(2.0), lr=0.1)
    _, priorities = learner.step(batch(), np.ones(2, np.float32))
    # at a = 0 both critics lose 0.49: q1 = 3.51, q2 = 1.51; target = 1 + 0.5 min(3.51, 1.51) = 1.755;
    # priorities |1.755 - q1| = 1.755 (the first critic's error)
    assert priorities.tolist() == pytest.approx([1.755, 1.755])
    # Adam's first step is lr * sign(grad): critic 1 is above the target and falls by 0.1, critic 2
    # (1.51 < 1.755) rises by 0.1: both are trained on the one target
    assert learner.critic.k.item() == pytest.approx(3.9)
    assert learner.critic2.k.item() == pytest.approx(2.1)
    alone = DPGLearner(BiasActor(), ConstCritic(4.0), lr=0.1)  # 1 + 0.5 * 3.51 - 3.51 = -0.755
    assert alone.step(batch(), np.ones(2, np.float32))[1].tolist() == pytest.approx([0.755, 0.755])


def test_actor_lr_moves_the_actor_by_its_own_rate():
    # Adam's first step is rate * sign(grad). The critic's q = 3.51 at a = 0 is above its target
    # 1 + 0.5 * 3.51 = 2.755, so k falls by lr 0.1; the actor's bias rises toward 0.7 by actor_lr 0.01.
    learner = DPGLearner(BiasActor(), ConstCritic(4.0), lr=0.1, actor_lr=0.01)
    learner.step(batch(), np.ones(2, np.float32))
    assert learner.critic.k.item() == pytest.approx(3.9)
    assert learner.actor.bias.item() == pytest.approx(0.01)
    both = DPGLearner(BiasActor(), ConstCritic(4.0), lr=0.1)  # 0: the actor takes lr
    both.step(batch(), np.ones(2, np.float32))
    assert both.actor.bias.item() == pytest.approx(0.1)


def test_policy_delay_and_polyak_targets():
    learner = DPGLearner(BiasActor(), ConstCritic(0.0), lr=0.1, tau=0.5, policy_delay=2, target_update=1)
    learner.critic.k.data.fill_(1.0)  # the online critic differs from its target (0), which moves only every 2
    actor0 = learner.actor.bias.item()
    learner.step(batch(), np.ones(2, np.float32))  # update 1: critic only; no hard copy although target_update=1
    k1 = learner.critic.k.item()
    assert learner.actor.bias.item() == actor0 and learner.critic_target.k.item() == 0.0
    learner.step(batch(), np.ones(2, np.float32))  # update 2: the actor steps, targets move half way
    k2, b2 = learner.critic.k.item(), learner.actor.bias.item()
    assert k2 != k1 and b2 == pytest.approx(0.1)  # Adam's first step: lr toward 0.7
    assert learner.critic_target.k.item() == pytest.approx(0.5 * k2)
    assert learner.actor_target.bias.item() == pytest.approx(0.5 * b2)
    assert learner.updates == 2


def test_target_noise_is_seeded_clipped_and_restored(tmp_path):
    def make(noise: float, clip: float, seed: int = 7) -> DPGLearner:
        torch.manual_seed(0)
        return DPGLearner(DPGActor(3, 2, [-1.0, -1.0], [1.0, 1.0], hidden=(8, 6)), DPGCritic(3, 2, hidden=(10, 7)),
                          lr=1e-2, target_noise=noise, target_noise_clip=clip, low=[-1.0, -1.0], high=[1.0, 1.0],
                          seed=seed)

    rng = np.random.default_rng(0)
    b = {"obs": rng.normal(size=(5, 3)).astype(np.float32), "next_obs": rng.normal(size=(5, 3)).astype(np.float32),
         "action": rng.uniform(-1, 1, size=(5, 2)).astype(np.float32), "reward": np.ones(5, np.float32),
         "discount": np.full(5, 0.9, np.float32)}
    w = np.ones(5, np.float32)
    plain, unclipped = make(0.0, 0.5), make(0.3, 10.0)
    # by hand: the same seeded draw, scaled by 0.3, added to the target action, clipped to the bounds
    nobs = torch.as_tensor(b["next_obs"])
    with torch.no_grad():
        noise = torch.randn((5, 2), generator=torch.Generator().manual_seed(7)) * 0.3
        a = (unclipped.actor_target(nobs) + noise).clamp(-1.0, 1.0)
        expected = np.abs((1.0 + 0.9 * unclipped.critic_target(nobs, a)
                           - unclipped.critic(torch.as_tensor(b["obs"]), torch.as_tensor(b["action"]))).numpy())
    np.testing.assert_allclose(unclipped.step(b, w)[1], expected, rtol=1e-5, atol=1e-6)
    # a noise clip of 0 leaves the target action alone: the same priorities as no noise
    np.testing.assert_array_equal(make(0.3, 0.0).step(b, w)[1], plain.step(b, w)[1])
    # the generator's state travels in the checkpoint: a restored learner draws what the original draws
    torch.save(unclipped.state_dict(), tmp_path / "td3.pt")
    restored = make(0.3, 10.0, seed=99)
    restored.load_state_dict(torch.load(tmp_path / "td3.pt", weights_only=True))
    np.testing.assert_array_equal(restored.step(b, w)[1], unclipped.step(b, w)[1])


def test_target_noise_needs_bounds():
    with pytest.raises(ValueError, match="bounds"):
        DPGLearner(BiasActor(), ConstCritic(0.0), target_noise=0.2)


def test_twin_critic_state_round_trip(tmp_path):
    torch.manual_seed(0)
    make = lambda: DPGLearner(BiasActor(), ConstCritic(1.0), critic2=ConstCritic(3.0), lr=0.1)  # noqa: E731
    learner = make()
    for _ in range(3):
        learner.step(batch(), np.ones(2, np.float32))
    torch.save(learner.state_dict(), tmp_path / "twin.pt")
    other = make()
    other.load_state_dict(torch.load(tmp_path / "twin.pt", weights_only=True))
    assert other.critic2.k.item() == learner.critic2.k.item() != 3.0
    assert other.critic2_target.k.item() == learner.critic2_target.k.item()
    np.testing.assert_array_equal(other.step(batch(), np.ones(2, np.float32))[1],
                                  learner.step(batch(), np.ones(2, np.float32))[1])


# ---- the options the TD3-values check needs (issue 33), each against numbers computed by hand

def test_relu_actor_and_a_critic_with_the_action_at_its_input():
    actor = DPGActor(2, 1, [-2.0], [2.0], hidden=(2,), activation="relu")
    critic = DPGCritic(1, 1, hidden=(2, 1), activation="relu", action_layer=0)
    with torch.no_grad():
        actor.body[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        actor.body[0].bias.zero_()
        actor.action.weight.copy_(torch.tensor([[1.0, 1.0]]))
        actor.action.bias.zero_()
        first, second, out = critic.joint[0], critic.joint[2], critic.joint[4]
        first.weight.copy_(torch.tensor([[1.0, 1.0], [1.0, -1.0]]))  # columns: obs, action
        first.bias.zero_()
        second.weight.copy_(torch.tensor([[1.0, 2.0]]))
        second.bias.fill_(-1.0)
        out.weight.fill_(3.0)
        out.bias.fill_(0.5)
    # relu(0.5, -1) = (0.5, 0) -> 2 tanh(0.5) = 0.924234; tanh hidden layers would have given 2 tanh(0.5 - 0.761594)
    assert actor(torch.tensor([[0.5, -1.0]])).item() == pytest.approx(2 * np.tanh(0.5), abs=1e-6)
    # obs 2, action 0.5: relu(2.5, 1.5) -> relu(2.5 + 3 - 1) = 4.5 -> 3 * 4.5 + 0.5 = 14
    assert critic(torch.tensor([[2.0]]), torch.tensor([[0.5]])).item() == pytest.approx(14.0)
    assert len(critic.obs_layer) == 0 and critic.joint[0].in_features == 2


def test_the_papers_critic_keeps_its_layer_names():
    """Checkpoints written before the options load into the default critic as they did."""
    critic = DPGCritic(3, 2, hidden=(10, 7))
    assert list(critic.state_dict()) == ["obs_layer.0.weight", "obs_layer.0.bias", "joint.0.weight", "joint.0.bias",
                                         "joint.2.weight", "joint.2.bias"]
    assert critic.joint[0].in_features == 10 + 2 and isinstance(critic.obs_layer[1], nn.Tanh)
    with pytest.raises(ValueError, match="hidden layer 0 to 1"):
        DPGCritic(3, 2, hidden=(10, 7), action_layer=2)


def test_no_actor_gradient_clipping_at_zero():
    """q = k - (a - 0.7)^2 gives the bias b the gradient 2 (b - 0.7): -1.4 at b = 0, then -1.2 at b = 0.1.
    Clipped to [-1, 1] both are -1 and Adam moves b by exactly lr twice (0.2); unclipped, Adam's second
    step is 0.1 * m^ / sqrt(v^) with m^ = (0.09 * -1.4 + 0.1 * -1.2) / 0.19 = -1.294737 and
    v^ = (0.000999 * 1.96 + 0.001 * 1.44) / 0.001999 = 1.699870: 0.099306, so b = 0.199306."""
    def two_steps(clip: float) -> float:
        learner = DPGLearner(BiasActor(), ConstCritic(0.0), lr=0.1, actor_grad_clip=clip, target_update=10**6)
        for _ in range(2):
            learner.step(batch(), np.ones(2, np.float32))
        return learner.actor.bias.item()

    assert two_steps(1.0) == pytest.approx(0.2, abs=1e-6)
    assert two_steps(0.0) == pytest.approx(0.199306, abs=1e-6)


def test_random_frames_act_uniformly_then_the_policy_takes_over():
    from tests.test_dpg_actor import LinearActor, LineEnv, make
    env = LineEnv(length=1000, bound=2.0)
    noisy, _ = make([env], LinearActor(), sigma=0.0, random_frames=500, seed=5)
    noisy.run(510)
    random, policy = np.array(env.actions[:500]), np.array(env.actions[500:])
    assert (random >= -2.0).all() and (random <= 2.0).all()
    assert random.mean() == pytest.approx(0.0, abs=0.15) and random.std() == pytest.approx(4 / 12**0.5, abs=0.1)
    # pi(s) = s + 0.5 clipped to the bound 2, noiseless: the policy's own actions from frame 501 on
    assert policy.tolist() == [2.0] * 10


@pytest.mark.parametrize("eviction", ["fifo", "prioritized"])
def test_apex_dpg_eviction_and_uniform_sampling_from_the_config(eviction):
    """Three batches of 50 into a table of 100: FIFO drops the oldest (values 0); prioritized eviction
    drops mostly the lowest priorities (batch 1, priority 1e-3 against 1 for the others). Sampling is
    uniform: weights all 1, and under FIFO the two kept batches are drawn equally, priorities aside."""
    from distrl import config as C
    from distrl.architectures.apex_dpg.builder import ApexDPG
    cfg = C.build_config("apex-dpg", "Pendulum-v1", overrides={
        "replay.capacity": 100, "replay.min_size": 10, "replay.eviction": eviction, "replay.sampling": "uniform",
        "seed": 1})
    table = ApexDPG(cfg).make_replay()
    for i, p in enumerate((1.0, 1e-3, 1.0)):
        table.add({"obs": np.full((50, 3), float(i), np.float32), "action": np.zeros((50, 1), np.float32)},
                  np.full(50, p))
    assert table.trim() == 50 and len(table) == 100
    _, sampled, weights = table.sample(2000)
    assert np.all(weights == 1.0)
    values, counts = np.unique(sampled["obs"][:, 0], return_counts=True)
    if eviction == "fifo":
        assert values.tolist() == [1.0, 2.0]
        assert counts.tolist() == pytest.approx([1000, 1000], abs=120)  # 3 sigma of a binomial(2000, 1/2) is 67
    else:
        assert 2.0 in values and np.mean(sampled["obs"][:, 0] == 1.0) < 0.1  # nearly all of batch 1 went


def test_a_critic_action_layer_past_the_hidden_layers_is_one_clear_error():
    from distrl import config as C
    from distrl.architectures.apex_dpg.builder import ApexDPG
    from distrl.errors import ConfigError
    cfg = C.build_config("apex-dpg", "Pendulum-v1", overrides={"net.critic_action_layer": 2})
    with pytest.raises(ConfigError, match="critic_action_layer=2 names no hidden layer of net.critic_hidden=\\(400, 300\\)"):
        ApexDPG(cfg)
