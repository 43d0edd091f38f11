"""distrl from Python (issue 21): train, resume and load_policy, a user's env and network, bad input."""

import functools
import json

import numpy as np
import pytest
import torch

import distrl
from distrl.checkpoint import latest_checkpoint
from distrl.nets import make_q_network
from tests.tiny_env import (
    dead_q_network,
    make_corridor,
    small_actor_critic,
    small_policy_value_network,
    small_q_network,
)

SMALL = {"replay.min_size": 200, "checkpoint_every": 100, "eval_episodes": 3, "log_every_s": 60.0}


def corridor_observation(cell: int, cells: int = 5) -> np.ndarray:
    obs = np.zeros(cells, np.float32)
    obs[cell] = 1.0
    return obs


def checkpoint_state(run_dir) -> dict:
    return torch.load(latest_checkpoint(run_dir), map_location="cpu", weights_only=True)["roles"]["learner"][0]["online"]


def test_cartpole_trains_and_its_policy_takes_the_checkpoints_greedy_action(tmp_path, capsys):
    summary = distrl.train("apex", "CartPole-v1", max_frames=1_500, seed=3, run_dir=tmp_path / "run",
                           overrides={**SMALL, "actors": 2})
    assert summary["frames"] >= 1_500 and summary["updates"] > 0 and summary["run_dir"] == str(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["updates"] == summary["updates"]
    assert "preset apex-cartpole" in capsys.readouterr().out  # the one line saying which hyperparameters

    # The checkpoint's Q-values, by a network built here (not through load_policy), on hand-made states.
    net = make_q_network((4,), 2, dueling=True, hidden=(128, 128))
    net.load_state_dict(checkpoint_state(tmp_path / "run"))
    states = np.array([[0, 0, 0, 0], [0.1, 1.0, -0.05, -1.5], [-0.2, -1.0, 0.1, 1.5], [0, 0, 0.2, 0]], np.float32)
    expected = net(torch.as_tensor(states)).argmax(dim=1).tolist()
    policy = distrl.load_policy(tmp_path / "run")
    assert [policy.act(s) for s in states] == expected
    assert all(isinstance(a, int) for a in map(policy.act, states))
    assert 0 < policy.updates <= summary["updates"]  # the latest checkpoint's, at or before the end


def test_a_users_registered_env_and_network_inline_with_q_values_by_hand(tmp_path, capsys):
    summary = distrl.train("apex", "tests.tiny_env:Corridor-v0", max_frames=2_000, seed=1, run_dir=tmp_path / "run",
                           network=small_q_network, overrides={**SMALL, "actors": 1})
    assert summary["eval_return_mean"] == 1.0  # walks right to the end every time
    assert "dead network" not in capsys.readouterr().err  # its outputs differ between cells
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["env"] == "tests.tiny_env:Corridor-v0"
    assert config["net"]["factory"] == "factory:tests.tiny_env:small_q_network"

    # Q = W2 relu(W1 x + b1) + b2 from the checkpoint's tensors, for each cell of the corridor.
    state = checkpoint_state(tmp_path / "run")
    w1, b1, w2, b2 = (state[k].numpy() for k in ("0.weight", "0.bias", "2.weight", "2.bias"))
    policy = distrl.load_policy(tmp_path / "run")  # config.json names the factory: it imports it again
    for cell in range(1, 4):
        x = corridor_observation(cell)
        q = w2 @ np.maximum(w1 @ x + b1, 0) + b2
        assert policy.act(x) == int(np.argmax(q))
    assert policy.act(corridor_observation(2)) == 1
    result = distrl.evaluate(tmp_path / "run", episodes=4, epsilon=0.0)  # what `distrl eval` runs
    assert result["returns"] == [1.0] * 4 and result["updates"] == policy.updates
    assert json.loads((tmp_path / "run" / "eval.json").read_text())["mean"] == 1.0


def test_an_env_factory_trains_and_a_partial_needs_passing_again_to_load(tmp_path):
    factory = functools.partial(make_corridor, 5)
    summary = distrl.train("apex", factory, max_frames=1_000, run_dir=tmp_path / "run", overrides=SMALL)
    assert summary["env"] == "factory:tests.tiny_env:make_corridor(partial)"
    with pytest.raises(distrl.ConfigError, match="cannot be imported again; pass the same function"):
        distrl.load_policy(tmp_path / "run")
    policy = distrl.load_policy(tmp_path / "run", env=factory, epsilon=1.0)
    assert {policy.act(corridor_observation(2)) for _ in range(50)} == {0, 1}  # epsilon 1: uniform actions


def test_resume_continues_from_the_checkpoint(tmp_path):
    distrl.train("apex", make_corridor, max_frames=1_000, run_dir=tmp_path / "run", overrides=SMALL)
    summary = distrl.resume(tmp_path / "run", overrides={"max_frames": 1_600})
    assert summary["resumed_from"] and summary["frames"] >= 1_600


@pytest.mark.parametrize("architecture, network, overrides", [
    ("gorila", small_q_network, {"replay.min_size": 100, "ps.shards": 1}),
    ("a3c", small_policy_value_network, {}),
    ("a3c", small_q_network, {"algo": "nstep_q"}),
    ("ba3c", small_policy_value_network, {"ps.shards": 1}),
])
def test_every_discrete_architecture_takes_a_users_network(tmp_path, architecture, network, overrides):
    summary = distrl.train(architecture, make_corridor, max_frames=600, actors=2, network=network,
                           run_dir=tmp_path / "run", overrides={"eval_episodes": 2, "checkpoint_every": 20, **overrides})
    assert summary["frames"] >= 600 and summary["updates"] > 0
    state = torch.load(latest_checkpoint(tmp_path / "run"), weights_only=True)["meta"]["shapes"]
    assert any(k.endswith("0.weight") and v == [16, 5] for k, v in state.items())  # the user's 16 units, 5 inputs
    assert distrl.load_policy(tmp_path / "run").act(corridor_observation(2)) in (0, 1)


def test_apex_dpg_takes_a_users_actor_and_critic(tmp_path):
    summary = distrl.train("apex-dpg", "Pendulum-v1", max_frames=800, actors=1, network=small_actor_critic,
                           run_dir=tmp_path / "run", overrides={"replay.min_size": 200, "eval_episodes": 1,
                                                                "learner.twin_critics": True})
    assert summary["updates"] > 0
    shapes = torch.load(latest_checkpoint(tmp_path / "run"), weights_only=True)["meta"]["shapes"]
    assert shapes["actor.0.weight"] == [16, 3] and shapes["critic.critic.body.0.weight"] == [16, 4]
    action = distrl.load_policy(tmp_path / "run").act(np.array([1.0, 0.0, 0.0], np.float32))
    assert action.shape == (1,) and abs(float(action[0])) <= 2.0  # Pendulum's bounds


def test_a_dpg_network_must_return_an_actor_and_a_critic(tmp_path):
    with pytest.raises(distrl.ConfigError, match=r"apex-dpg needs \(actor, critic\).*as torch.nn.Modules"):
        distrl.train("apex-dpg", "Pendulum-v1", network=small_q_network_for_box, run_dir=tmp_path / "run")


def test_a_dead_network_is_told_once(tmp_path, capsys):
    """Hidden units that never fire give one output on every state: the run says so, once, after learning began."""
    distrl.train("apex", "tests.tiny_env:Corridor-v0", max_frames=1_000, seed=1, run_dir=tmp_path / "run",
                 network=dead_q_network, overrides={**SMALL, "actors": 1, "eval_every": 100, "log_every_s": 1e-6})
    err = capsys.readouterr().err
    assert err.count("a dead network") == 1 and "lower learner.lr" in err


def small_q_network_for_box(observation_space, action_space):
    return torch.nn.Linear(observation_space.shape[0], 1)


@pytest.mark.usefixtures("local_ray")
def test_a_users_env_factory_and_network_on_ray(tmp_path):
    summary = distrl.train("apex", make_corridor, max_frames=2_000, runtime="ray", actors=2, network=small_q_network,
                           run_dir=tmp_path / "run", overrides={**SMALL, "ray.steps_per_call": 50})
    assert summary["frames"] >= 2_000 and summary["updates"] > 0 and summary["faults"].get("actor_restarts", 0) == 0
    state = checkpoint_state(tmp_path / "run")
    w1, b1, w2, b2 = (state[k].numpy() for k in ("0.weight", "0.bias", "2.weight", "2.bias"))
    policy = distrl.load_policy(tmp_path / "run")
    for cell in range(1, 4):
        x = corridor_observation(cell)
        assert policy.act(x) == int(np.argmax(w2 @ np.maximum(w1 @ x + b1, 0) + b2))


# ---- bad input: one ConfigError each, naming the fix -------------------------------------------------

def test_an_unknown_keyword_names_the_nearest_one():
    with pytest.raises(distrl.ConfigError, match="unknown keyword 'seeds': did you mean 'seed'"):
        distrl.train("apex", "CartPole-v1", seeds=3)


def test_an_unpicklable_env_factory_on_ray_names_the_fix(tmp_path):
    with pytest.raises(distrl.ConfigError, match="cannot be pickled for Ray's workers.*define it with `def`"):
        distrl.train("apex", lambda: make_corridor(), runtime="ray", run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_network_with_the_wrong_output_shape_names_the_contract(tmp_path):
    def three_outputs(observation_space, action_space):
        return torch.nn.Linear(observation_space.shape[0], 3)

    with pytest.raises(distrl.ConfigError, match=r"returned \[\(2, 3\)\].*Q-values of shape \(batch, actions\), "
                                                 r"here 2 actions"):
        distrl.train("apex", make_corridor, network=three_outputs, run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_policy_value_network_must_return_logits_and_values(tmp_path):
    def q_only(observation_space, action_space):
        return torch.nn.Linear(observation_space.shape[0], 2)

    with pytest.raises(distrl.ConfigError, match="a3c needs forward.*-> \\(logits"):
        distrl.train("a3c", make_corridor, network=q_only, run_dir=tmp_path / "run")


def test_an_env_id_from_a_module_that_does_not_exist(tmp_path):
    with pytest.raises(distrl.ConfigError, match="cannot import module 'no_such_pkg.envs'.*install the package"):
        distrl.train("apex", "no_such_pkg.envs:Maze-v0", run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_an_unknown_config_key_in_overrides():
    with pytest.raises(distrl.ConfigError, match="unknown config key 'learner.lrr'"):
        distrl.train("apex", "CartPole-v1", overrides={"learner.lrr": 1e-3})


def test_import_distrl_does_not_load_torch():
    import subprocess
    import sys
    code = "import sys, distrl; assert 'torch' not in sys.modules, 'torch loaded'; print(distrl.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == distrl.__version__
