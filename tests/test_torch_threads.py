"""How many torch threads a role gets when the config leaves `torch_threads` at 0 (automatic)."""

from __future__ import annotations

import pytest

from distrl.architectures import make_architecture
from distrl.architectures.common import default_torch_threads
from distrl.config import build_config


@pytest.mark.parametrize("obs_shape, threads", [
    ((4, 84, 84), 0),   # Atari's CNN: one per core (torch's default)
    ((4, 10, 10), 1),   # the MinAtar CNN: a small net, one thread
    ((17,), 1),         # an MLP
])
def test_only_atari_stacks_get_a_thread_per_core(obs_shape, threads):
    assert default_torch_threads(obs_shape) == threads


@pytest.mark.parametrize("arch, env, torch_threads, learner_threads", [
    ("apex", "CartPole-v1", 0, 1), ("apex", "CartPole-v1", 3, 3),
    ("r2d2", "MinAtar/Breakout-v1", 0, 1),  # was one per core: 2 threads beside the actors on a 2-core machine
    ("apex", "MinAtar/Breakout-v1", 2, 2),
])
def test_the_learner_role_on_ray_gets_the_rule_or_the_configured_count(arch, env, torch_threads, learner_threads):
    cfg = build_config(arch, env, overrides={"torch_threads": torch_threads})
    roles = {role.name: role for role in make_architecture(cfg).topology().roles}
    assert roles["learner"].torch_threads == learner_threads
