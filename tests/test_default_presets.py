"""Which preset a run gets when none is named, what `distrl train` says about it on its first line,
and the rule every default keeps on non-Atari ids: learning starts within the first 10% of the
run's frames (a default that cannot make an update early is a bug, issue 22)."""

import dataclasses

import pytest

from distrl import config as C
from distrl.cli import main
from tests.cases import CONTINUOUS, DISCRETE, cases, names


@pytest.mark.parametrize("env", ["Hopper-v5", "HalfCheetah-v5", "Walker2d-v5"])
def test_continuous_control_default_follows_the_actor_count(env):
    assert C.build_config("apex-dpg", env, overrides={"actors": 2}).preset == "apex-dpg-twin-critics-bf16"
    assert C.build_config("apex-dpg", env, overrides={"actors": 31}).preset == "apex-dpg-twin-critics-bf16"
    assert C.build_config("apex-dpg", env, overrides={"actors": 64}).preset == "apex-dpg-mujoco"
    assert C.build_config("apex-dpg", env, overrides={"actors": "32"}).preset == "apex-dpg-mujoco"  # --set actors=32
    small = C.build_config("apex-dpg", env)
    assert small.preset == "apex-dpg-twin-critics-bf16" and small.actors == 2
    assert C.build_config("apex-dpg", "Pendulum-v1", overrides={"actors": 64}).preset == "apex-dpg-pendulum"
    assert C.build_config("apex-dpg", env, "apex-dpg-mujoco", {"actors": 2}).preset == "apex-dpg-mujoco"  # named wins


def test_learning_start_in_frames():
    cfg = C.build_config("apex", "ALE/Pong-v5")
    assert C.learning_start_frames(cfg) == 50_000 * 4  # transitions of 4 emulator frames
    gorila = C.build_config("gorila", "CartPole-v1", overrides={"actors": 3, "replay.min_size": 100})
    assert C.learning_start_frames(gorila) == 300  # every bundle's own table fills
    gorila = C.build_config("gorila", "CartPole-v1", overrides={"actors": 3, "replay.min_size": 100,
                                                                "replay.mode": "global"})
    assert C.learning_start_frames(gorila) == 100
    assert C.learning_start_frames(C.build_config("ba3c", "CartPole-v1")) == 0


ENVS = {DISCRETE: ("CartPole-v1", "MinAtar/Breakout-v1"),
        CONTINUOUS: ("Pendulum-v1", "Hopper-v5", "HalfCheetah-v5", "Walker2d-v5")}
DEFAULTS = [(arch, env, "") for arch in names() for env in ENVS[cases(arch).smoke[0]]] + \
           [("a3c", env, algo) for env in ENVS[DISCRETE] for algo in ("nstep_q", "onestep_q", "sarsa")] + \
           [("a3c", "Pendulum-v1", "")]


@pytest.mark.parametrize("arch,env,algo", DEFAULTS)
def test_every_non_atari_default_learns_within_the_first_tenth_of_its_run(arch, env, algo):
    for actors in (None, 2, 8):
        overrides = {k: v for k, v in (("algo", algo), ("actors", actors)) if v}
        cfg = C.build_config(arch, env, overrides=overrides)
        assert C.learning_start_frames(cfg) <= 0.1 * cfg.max_frames, (cfg.preset, actors)
        assert "note:" not in C.describe_preset(cfg, named=False)


def test_first_line_says_which_preset_and_why(capsys, tmp_path):
    assert C.describe_preset(C.build_config("apex-dpg", "Hopper-v5", overrides={"actors": 2}), named=False,
                             actors=2) == ("preset apex-dpg-twin-critics-bf16: 2 actors; the paper's values are apex-dpg-mujoco "
                                           "(chosen from 32 actors, or with --preset apex-dpg-mujoco)")
    assert C.describe_preset(C.build_config("apex-dpg", "Hopper-v5", overrides={"actors": 64}), named=False,
                             actors=64) == "preset apex-dpg-mujoco: 64 actors: the paper's values"
    short = C.describe_preset(C.build_config("apex-dpg", "Hopper-v5", "apex-dpg-mujoco",
                                             {"actors": 2, "max_frames": 60_000}), named=True)
    assert short == ("preset apex-dpg-mujoco: named with --preset\nnote: learning starts after 50,000 frames "
                     "(replay.min_size 50,000), 83% of this run's 60,000: give --max-frames 500,000 or more, "
                     "--set replay.min_size=..., or a smaller preset")

    code = main(["train", "apex", "--env", "CartPole-v1", "--runtime", "inline", "--max-frames", "300", "--quiet",
                 "--run-dir", str(tmp_path / "run"), "--set", "replay.min_size=100", "--set", "eval_episodes=0"])
    assert code == 0
    assert capsys.readouterr().out.splitlines()[0] == ("preset apex-cartpole: small-run values, the default for "
                                                       "non-Atari ids; the paper's are apex-atari")


@pytest.mark.parametrize("name", sorted(C.PRESETS))
def test_every_preset_builds_and_validates(name):
    """A preset is a dict of --set values: each must be a key of its architecture, in its range."""
    architecture = C.PRESETS[name][0]
    env = ("ALE/Pong-v5" if "atari" in name else "MinAtar/Breakout-v1" if "minatar" in name
           else "Pendulum-v1" if architecture == "apex-dpg" or "pendulum" in name else "CartPole-v1")
    if "minatar" in name:
        pytest.importorskip("minatar")
    cfg = C.build_config(architecture, env, preset=name)
    assert cfg.preset == name


def test_the_td3_learner_preset_is_td3s_learner_inside_apex():
    cfg = C.build_config("apex-dpg", "Pendulum-v1", preset="apex-dpg-td3-learner")
    le = cfg.learner
    assert (le.twin_critics, le.tau, le.policy_delay, le.target_noise, le.n_step, le.batch_size) == (True, 0.005, 2, 0.2, 1, 256)
    assert (cfg.replay.sampling, cfg.replay.samples_per_insert, cfg.net.activation, cfg.net.critic_hidden) == \
        ("prioritized", 32.0, "relu", (256, 256))


def test_the_one_critic_preset_is_the_td3_learner_preset_less_its_clipped_double_q():
    one = C.build_config("apex-dpg", "Pendulum-v1", preset="apex-dpg-one-critic")
    td3 = C.build_config("apex-dpg", "Pendulum-v1", preset="apex-dpg-td3-learner")
    assert (one.learner.twin_critics, one.learner.target_noise, one.learner.policy_delay) == (False, 0.0, 1)
    assert (one.learner.tau, one.learner.n_step, one.learner.batch_size, one.actor.sigma) == (0.005, 1, 256, 0.1)
    assert one.replay == td3.replay and one.net == td3.net and one.eval_every == 1000
    # the default: the one-critic preset with TD3's clipped double Q back, nothing else changed
    twin = C.build_config("apex-dpg", "Pendulum-v1", preset="apex-dpg-twin-critics")
    assert (twin.learner.twin_critics, twin.learner.target_noise, twin.learner.policy_delay) == (True, 0.0, 1)
    assert twin.replay == one.replay and twin.net == one.net and twin.actor == one.actor
    assert twin.eval_every == 1000 and twin.learner.tau == 0.005 and twin.learner.lr == one.learner.lr
    # the default: the twin critics with learner.bf16, nothing else changed
    bf16 = C.build_config("apex-dpg", "Pendulum-v1", preset="apex-dpg-twin-critics-bf16")
    assert bf16.learner.bf16 and not twin.learner.bf16
    assert bf16.replay == twin.replay and bf16.net == twin.net and bf16.actor == twin.actor
    assert dataclasses.replace(bf16.learner, bf16=False) == twin.learner and bf16.eval_every == twin.eval_every
