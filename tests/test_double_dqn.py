"""The Double DQN variant: one package (distrl/architectures/double_dqn/) and its tests, nothing else.
Its three changes to DQN, each checked where it acts: the target, the head, the optimizer."""

import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.architectures import PACKAGES, make_architecture
from distrl.components.learner import DQNLearner
from distrl.nets.q_networks import DuelingHead


def test_it_is_registered_with_dqns_values_and_its_three_changes():
    assert PACKAGES["double-dqn"] == "double_dqn"
    cfg, dqn = C.build_config("double-dqn", "ALE/Pong-v5"), C.build_config("dqn", "ALE/Pong-v5")
    assert cfg.preset == "double-dqn-atari" and cfg.actors == 1
    le = cfg.learner
    assert (le.double_q, le.optimizer, le.lr, le.adam_eps, cfg.net.dueling) == (True, "adam", 6.25e-5, 1.5e-4, True)
    # the rest is DQN's (Mnih et al. 2015)
    assert (le.batch_size, le.n_step, le.loss, le.target_update) == (32, 1, "huber", 10_000)
    assert (cfg.replay.capacity, cfg.replay.min_size, cfg.replay.samples_per_insert) == (1_000_000, 50_000, 8.0)
    assert (cfg.eval_epsilon, cfg.eval_max_frames) == (dqn.eval_epsilon, dqn.eval_max_frames)
    assert C.build_config("double-dqn", "MinAtar/Breakout-v1").preset == "double-dqn-minatar"


def test_its_learner_has_rainbows_adam_and_a_dueling_head():
    learner = make_architecture(C.build_config("double-dqn", "CartPole-v1")).make_learner()
    assert isinstance(learner.optimizer, torch.optim.Adam)
    group = learner.optimizer.param_groups[0]
    assert (group["lr"], group["eps"]) == (5e-4, 1.5e-4)  # the cartpole preset's step, Rainbow's epsilon
    assert any(isinstance(m, DuelingHead) for m in learner.online.modules())


def test_its_target_is_double_q_by_hand():
    """One transition stored with discount 0.5: the online net picks argmax_a Q_online(s', a) = 1, and the
    target net values that action, Q_target(s', 1) = 3, where its own argmax would take 5. G = 1 + 0.5 * 3
    = 2.5 against q(s, 0) = 1: priority 1.5 (DQN's target, 1 + 0.5 * 5 = 3.5, would give 2.5)."""

    class Table(torch.nn.Module):  # Q-values set by hand, one row per observation
        def __init__(self, rows):
            super().__init__()
            self.rows = torch.nn.Parameter(torch.tensor(rows))

        def forward(self, obs):
            return self.rows[obs.long().squeeze(-1)]

    learner = DQNLearner(Table([[1.0, 0.0], [0.0, 2.0]]), C.build_config("double-dqn", "CartPole-v1").learner)
    learner.target.rows.data = torch.tensor([[0.0, 0.0], [5.0, 3.0]])
    batch = {"obs": np.array([[0]]), "action": np.array([0]), "reward": np.array([1.0]),
             "next_obs": np.array([[1]]), "discount": np.array([0.5])}
    _, priorities = learner.step(batch, np.ones(1))
    assert priorities == pytest.approx([1.5])
