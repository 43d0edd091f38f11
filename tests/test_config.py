import pytest

from distrl import config as C
from distrl.errors import ConfigError
from tests.cases import cases, names


def test_atari_defaults_are_the_papers_values():
    cfg = C.build_config("apex", "ALE/Pong-v5")
    assert cfg.preset == "apex-atari"
    assert (cfg.replay.alpha, cfg.replay.beta, cfg.replay.capacity) == (0.6, 0.4, 2_000_000)
    assert (cfg.learner.batch_size, cfg.learner.n_step, cfg.learner.target_update) == (512, 3, 2500)
    assert cfg.learner.lr == pytest.approx(0.00025 / 4) and cfg.learner.rms_eps == 1.5e-7
    assert (cfg.actor.flush_size, cfg.actor.pull_every, cfg.replay.min_size) == (50, 400, 50_000)


def test_non_atari_env_gets_the_small_preset_and_overrides_win():
    cfg = C.build_config("apex", "CartPole-v1", overrides={"learner.lr": "1e-3", "net.hidden": "32,32",
                                                           "replay.compress": "false", "actors": "3"})
    assert cfg.preset == "apex-cartpole"
    assert cfg.learner.lr == 1e-3 and cfg.net.hidden == (32, 32) and cfg.replay.compress is False
    assert cfg.actors == 3


def test_round_trip_through_a_dict():
    cfg = C.build_config("apex", "CartPole-v1", overrides={"seed": 7})
    again = C.from_dict(C.to_dict(cfg))
    assert again == cfg


@pytest.mark.parametrize("key,value", [("actors", "1.5"), ("learner.double_q", "maybe"), ("seed", "-1"),
                                       ("learner.n_step", "0"), ("eval_epsilon", "2"), ("eval_together", "0")])
def test_bad_values_raise(key, value):
    with pytest.raises(ConfigError):
        C.build_config("apex", "CartPole-v1", overrides={key: value})


def test_evaluation_protocols_name_their_values_and_explicit_values_win():
    apex = C.build_config("apex", "ALE/Pong-v5")
    assert (apex.eval_protocol, apex.eval_epsilon, apex.eval_max_frames) == ("apex", 0.001, 108_000)
    gorila = C.build_config("gorila", "ALE/Pong-v5")  # DQN's protocol, as Nair et al. evaluated
    assert (gorila.eval_protocol, gorila.eval_epsilon, gorila.eval_episodes, gorila.eval_max_frames) == \
        ("dqn", 0.05, 30, 18_000)
    mine = C.build_config("apex", "ALE/Pong-v5", overrides={"eval_protocol": "dqn", "eval_episodes": "5"})
    assert (mine.eval_epsilon, mine.eval_episodes, mine.eval_max_frames) == (0.05, 5, 18_000)
    assert C.build_config("apex-dpg", "Pendulum-v1").eval_epsilon == 0.0  # no protocol named: its own default
    with pytest.raises(ConfigError, match="eval_protocol"):
        C.build_config("apex", "ALE/Pong-v5", overrides={"eval_protocol": "human"})


def test_the_evaluation_cap_cuts_atari_episodes():
    """An 800-frame cap is 200 agent steps: a random Pong policy loses a few points, not the whole game."""
    from distrl.architectures import make_architecture
    cfg = C.build_config("apex", "ALE/Pong-v5", overrides={"eval_max_frames": "800", "eval_episodes": "2",
                                                             "torch_threads": "1", "actors": "1", "eval_together": "2"})
    arch = make_architecture(cfg)
    evaluator = arch.make_evaluator()
    assert evaluator.together == 2  # both episodes at once, as the config says
    result = evaluator.evaluate(arch.make_net().state_dict())
    assert len(result["returns"]) == 2 and all(-5 <= r <= 0 for r in result["returns"])


def declared(obj, prefix=""):
    """(key, metadata, type) of every leaf declared with a range."""
    import dataclasses
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            yield from declared(value, f"{prefix}{f.name}.")
        elif "range" in f.metadata:
            yield prefix + f.name, f.metadata, f.type


def just_outside(meta, kind):
    ge, gt, le, lt, choices = meta["range"]
    step = 1 if kind == "int" else 0.5
    if choices is not None:
        return "no-such-choice"
    if ge is not None:
        return ge - step
    if gt is not None:
        return gt
    return (le + step) if le is not None else lt


@pytest.mark.parametrize("arch", names())
def test_every_declared_range_refuses_the_value_just_outside_it(arch):
    env = cases(arch).checkpoint[0]
    keys = list(declared(C.ARCHITECTURES[arch]()))
    assert len(keys) >= 20  # the sections declare their ranges
    for key, meta, kind in keys:
        bad = just_outside(meta, kind)
        with pytest.raises(ConfigError, match=f"invalid value .* for {key}: accepted values are"):
            C.build_config(arch, env, overrides={key: bad})


def test_an_old_key_name_is_an_unknown_key():
    """Renamed keys of the unreleased versions are not carried: one error naming the key and the valid ones."""
    with pytest.raises(ConfigError, match="unknown config key 'params.store': valid keys are .*ps.store"):
        C.build_config("a3c", "CartPole-v1", overrides={"params.store": "sharded"})
