"""Ape-X DPG as a builder: the parts it swaps into Ape-X (prioritized eviction, noisy actors, the
actor-critic pair as the published parameters), inline runs with resume and eval, bad envs, and a
real Pendulum training."""

import json

import numpy as np
import pytest

from distrl import config as C
from distrl.architectures.apex_dpg.builder import ApexDPG
from distrl.cli import main
from distrl.errors import ConfigError
from distrl.replay import PrioritizedRemover
from distrl.training import train

FAST = {"replay.min_size": 200, "checkpoint_every": 100, "eval_episodes": 2, "log_every_s": 0.2,
        "learner.batch_size": 32, "net.actor_hidden": (16, 16), "net.critic_hidden": (16, 16)}


def small_cfg(tmp_path, frames=1200, **extra):
    return C.build_config("apex-dpg", "Pendulum-v1", overrides={
        **FAST, "max_frames": frames, "seed": 2, "run_dir": str(tmp_path / "run"), **extra})


def test_presets_hold_the_papers_values():
    cfg = C.build_config("apex-dpg", "HalfCheetah-v5", overrides={"actors": 64})  # the paper's scale picks it
    assert cfg.preset == "apex-dpg-mujoco" and cfg.actors == 64
    assert (cfg.learner.batch_size, cfg.learner.lr, cfg.learner.target_update) == (512, 1e-4, 100)
    assert (cfg.actor.sigma, cfg.replay.alpha, cfg.replay.alpha_evict, cfg.replay.capacity) == (0.3, 0.6, -0.4, 10**6)
    assert (cfg.net.actor_hidden, cfg.net.critic_hidden) == ((300, 200), (400, 300))
    assert C.build_config("apex-dpg", "Pendulum-v1").preset == "apex-dpg-pendulum"
    with pytest.raises(ConfigError, match="alpha_evict"):
        C.build_config("apex-dpg", "Pendulum-v1", overrides={"replay.alpha_evict": 0.5})


def test_discrete_env_is_refused_with_the_fix():
    with pytest.raises(ConfigError, match="continuous.*train apex"):
        ApexDPG(C.build_config("apex-dpg", "CartPole-v1"))


def test_builder_uses_prioritized_eviction_and_publishes_actor_and_critic(tmp_path):
    arch = ApexDPG(small_cfg(tmp_path))
    assert isinstance(arch.make_replay().remover, PrioritizedRemover)
    learner = arch.make_learner()
    params, version = learner.latest()
    assert version == 0 and {k.split(".")[0] for k in params} == {"actor", "critic"}
    evaluator = arch.make_evaluator(episodes=1)
    evaluator.net.load_state_dict(params)
    action = evaluator.policy(np.zeros((3, 3), np.float32))
    assert action.shape == (3, 1) and np.all(np.abs(action) <= 2.0)  # Pendulum's bounds, no noise


def test_inline_run_resumes_and_evaluates(tmp_path):
    first = train(small_cfg(tmp_path), live=False)
    assert first["updates"] > 0 and first["rates"]["replay_inserts_per_s"] > 0 and first["eval_episodes"] == 2
    run = tmp_path / "run"
    assert main(["train", "apex-dpg", "--resume", str(run), "--max-frames", "1800", "--quiet"]) == 0
    second = json.loads((run / "summary.json").read_text())
    assert second["frames"] >= 1800 and second["updates"] > first["updates"]
    assert main(["eval", str(run), "--episodes", "1"]) == 0
    assert json.loads((run / "eval.json").read_text())["episodes"] == 1


def test_a_deepmind_control_task_trains_by_id(tmp_path):
    """The paper's own domain: `distrl train apex-dpg --env dm_control/cheetah-run-v0` (the dmc extra),
    TD3's values inline, short: random frames, then updates, then a noiseless evaluation."""
    pytest.importorskip("shimmy")
    code = main(["train", "apex-dpg", "--env", "dm_control/cheetah-run-v0", "--preset", "apex-dpg-td3",
                 "--runtime", "inline", "--max-frames", "400", "--seed", "1", "--run-dir", str(tmp_path / "run"),
                 "--quiet", "--set", "replay.min_size=300", "--set", "actor.random_frames=300", "--set",
                 "eval_episodes=1", "--set", "learner.batch_size=32", "--set", "net.actor_hidden=16,16",
                 "--set", "net.critic_hidden=16,16"])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert code == 0 and summary["frames"] >= 400 and summary["updates"] >= 90 and summary["eval_episodes"] == 1
    assert 0 <= summary["eval_return_mean"] <= 1000  # cheetah-run pays at most 1 per step for 1,000 steps


@pytest.mark.learning(seconds=30)
def test_apex_dpg_inline_learns_pendulum(tmp_path):
    """The default preset for Pendulum-v1 (apex-dpg-pendulum) inline for 20k frames (random is about
    -1400): issue 22's slow test of a default that learns. At 30k frames seed 1 gave -167; evaluated
    every ~1,000 updates, seeds 1, 2 and 3 crossed -300 at 2.0k, 3.0k and 6.1k updates (5k-13k frames)
    and held -145 to -186 from then on; 20k frames are 9.5k updates. It stops at the first evaluation at
    -300 or more (-168 at 2.2k updates, 35 s paired)."""
    cfg = C.build_config("apex-dpg", "Pendulum-v1", overrides={"seed": 1, "max_frames": 20_000, "eval_every": 1000,
                                                              "stop_return": -300, "run_dir": str(tmp_path / "run")})
    assert cfg.preset == "apex-dpg-pendulum"
    assert train(cfg, live=False)["eval_return_mean"] >= -300
