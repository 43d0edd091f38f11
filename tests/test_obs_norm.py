"""Observation normalisation for Ape-X DPG (net.obs_norm): running statistics computed by hand, one set
shared by every network of the learner, and carried to actors and checkpoints in the state dict."""

import numpy as np
import pytest
import torch

from distrl.components.dpg_learner import DPGLearner
from distrl.nets import ObsNorm
from distrl.nets.dpg import DPGActor, DPGCritic, dpg_pair

torch.set_num_threads(1)


def test_running_statistics_fold_batches_as_one_population():
    norm = ObsNorm(2)
    assert norm(torch.tensor([[3.0, -7.0]]))[0].tolist() == pytest.approx([3.0, -5.0])  # identity, clipped at 5
    norm.update(np.array([[1.0, 2.0], [3.0, 6.0]]))
    assert norm.mean.tolist() == [2.0, 4.0] and norm.var.tolist() == [1.0, 4.0] and float(norm.count) == 2
    norm.update(np.array([[5.0, 10.0]]))
    # {1, 3, 5}: mean 3, population variance 8/3; {2, 6, 10}: mean 6, variance 32/3
    assert norm.mean.tolist() == pytest.approx([3.0, 6.0])
    assert norm.var.tolist() == pytest.approx([8 / 3, 32 / 3]) and float(norm.count) == 3
    out = norm(torch.tensor([[3.0, 8.0], [100.0, 6.0]]))
    assert out.flatten().tolist() == pytest.approx([0.0, 2 / (32 / 3) ** 0.5, 5.0, 0.0], rel=1e-5)  # 97/1.63 clipped


def test_the_learner_updates_one_shared_norm_and_publishes_it(tmp_path):
    torch.manual_seed(0)
    norm = ObsNorm(3)
    actor = DPGActor(3, 1, [-1.0], [1.0], (8,), obs_norm=norm)
    learner = DPGLearner(actor, DPGCritic(3, 1, (8, 8), obs_norm=norm), critic2=DPGCritic(3, 1, (8, 8)),
                         tau=0.005, low=[-1.0], high=[1.0])
    obs = np.array([[0.0, 1.0, 2.0], [2.0, 3.0, 10.0]], np.float32)
    batch = {"obs": obs, "next_obs": obs + 1, "action": np.zeros((2, 1), np.float32),
             "reward": np.ones(2, np.float32), "discount": np.full(2, 0.9, np.float32)}
    learner.step(batch, np.ones(2, np.float32))
    for net in (learner.critic, learner.critic2, learner.actor_target, learner.critic_target, learner.critic2_target):
        assert net.obs_norm is norm  # the twin and every target see the online statistics
    assert norm.mean.tolist() == [1.0, 2.0, 6.0] and norm.var.tolist() == [1.0, 1.0, 16.0]
    params, _ = learner.latest()
    assert params["actor.obs_norm.mean"].tolist() == params["critic.obs_norm.mean"].tolist() == [1.0, 2.0, 6.0]
    # an actor's own pair (its own ObsNorm, still the identity) takes the statistics with a pull
    local_norm = ObsNorm(3)
    local = dpg_pair(DPGActor(3, 1, [-1.0], [1.0], (8,), obs_norm=local_norm), DPGCritic(3, 1, (8, 8), obs_norm=local_norm))
    local.load_state_dict(params)
    assert torch.equal(local["actor"](torch.as_tensor(obs)), actor(torch.as_tensor(obs)))
    # and a checkpoint restores them
    torch.save(learner.state_dict(), tmp_path / "learner.pt")
    norm2 = ObsNorm(3)
    fresh = DPGLearner(DPGActor(3, 1, [-1.0], [1.0], (8,), obs_norm=norm2), DPGCritic(3, 1, (8, 8), obs_norm=norm2),
                       critic2=DPGCritic(3, 1, (8, 8)), tau=0.005, low=[-1.0], high=[1.0])
    fresh.load_state_dict(torch.load(tmp_path / "learner.pt", weights_only=True))
    assert norm2.mean.tolist() == [1.0, 2.0, 6.0] and float(norm2.count) == 2


def test_obs_norm_from_the_config_and_its_error_with_a_users_networks():
    from distrl import config as C
    from distrl.architectures.apex_dpg.builder import ApexDPG
    from distrl.errors import ConfigError
    builder = ApexDPG(C.build_config("apex-dpg", "Pendulum-v1", overrides={"net.obs_norm": True}))
    net = builder.make_net()
    assert isinstance(net["actor"].obs_norm, ObsNorm) and net["actor"].obs_norm is net["critic"].obs_norm
    plain = ApexDPG(C.build_config("apex-dpg", "Pendulum-v1")).make_net()
    assert set(plain.state_dict()) == set(net.state_dict()) - {f"{n}.obs_norm.{b}" for n in ("actor", "critic")
                                                                for b in ("mean", "var", "count")}
    cfg = C.build_config("apex-dpg", "Pendulum-v1", overrides={"net.obs_norm": True,
                                                              "net.factory": "factory:tests.tiny_env:small_actor_critic"})
    with pytest.raises(ConfigError, match="net.obs_norm normalises distrl's own networks, not a net.factory's"):
        ApexDPG(cfg)
