"""The A3C family as distrl builders: actor-learners over SharedMemoryParams or the sharded store,
inline runs for every algorithm, resume, and bad combinations refused."""

import copy
import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.algos.actor_critic import a3c_loss
from distrl.architectures.a3c.builder import A3C
from distrl.cli import main
from distrl.components.actor_learner import ActorLearner
from distrl.errors import ConfigError
from distrl.nets import PolicyValueNet
from distrl.params.param_server import ShardedParameterServer, flatten, local_shards
from distrl.training import train

SMALL = {"eval_episodes": 2, "log_every_s": 0.2, "checkpoint_every": 50, "seed": 2}


def small_cfg(tmp_path, frames=1500, **extra):
    return C.build_config("a3c", extra.pop("env", "CartPole-v1"), overrides={
        **SMALL, "max_frames": frames, "run_dir": str(tmp_path / "run"), **extra})


@pytest.mark.parametrize("algo", ["a3c", "nstep_q", "onestep_q", "sarsa"])
def test_every_algorithm_runs_inline_and_updates_the_store(tmp_path, algo):
    summary = train(small_cfg(tmp_path, algo=algo), live=False)
    assert summary["frames"] >= 1500 and summary["eval_episodes"] == 2
    # one update per rollout of at most t_max = 5 steps: at least frames / 5 updates
    assert summary["updates"] >= 1500 // 5
    assert list((tmp_path / "run" / "checkpoints").glob("ckpt-*.pt"))


def test_sharded_store_runs_the_same_builder(tmp_path):
    summary = train(small_cfg(tmp_path, **{"ps.store": "sharded", "ps.shards": 2}), live=False)
    assert summary["updates"] >= 300


def test_inline_runs_are_deterministic(tmp_path):
    a = train(small_cfg(tmp_path / "a", frames=800), live=False)
    b = train(small_cfg(tmp_path / "b", frames=800), live=False)
    assert a["eval_returns"] == b["eval_returns"] and a["final_return_mean"] == b["final_return_mean"]


def test_worker_push_moves_the_shared_parameters_and_the_peer_sees_them(tmp_path):
    from distrl.params.shared_memory import SharedMemoryParams
    arch = A3C(small_cfg(tmp_path))
    owner = arch.create_shared_store()
    try:
        a = arch.make_actor_learner(0, SharedMemoryParams.attach(owner.spec()))
        b = arch.make_actor_learner(1, SharedMemoryParams.attach(owner.spec()))
        before = owner.pull()[0]
        a.run(5, 0)
        after = owner.pull()[0]
        assert a.updates >= 1 and not np.array_equal(before, after)
        b.run(1, 0)  # b's first rollout starts from b's pull at construction; its push returns a's update too
        flat = torch.cat([p.detach().reshape(-1) for p in b.net.parameters()]).numpy()
        np.testing.assert_array_equal(flat, owner.pull()[0])
    finally:
        owner.unlink()


def test_q_worker_refreshes_its_target_on_global_frames(tmp_path):
    arch = A3C(small_cfg(tmp_path, algo="onestep_q", **{"rl.target_update": 1000}))
    store = ShardedParameterServer([arch.make_shard(0)])
    w = arch.make_actor_learner(0, store)
    w.run(5, 0)  # period 0: the target is the initial copy
    first = [p.clone() for p in w.target.parameters()]
    w.run(5, 500)  # still period 0: unchanged though the online net moved
    assert all(torch.equal(a, b) for a, b in zip(first, w.target.parameters()))
    w.run(5, 1000)  # global frames entered period 1: the target is the current parameters
    assert not all(torch.equal(a, b) for a, b in zip(first, w.target.parameters()))


def test_workers_draw_their_final_epsilons_and_anneal_on_global_frames(tmp_path):
    arch = A3C(small_cfg(tmp_path, algo="nstep_q", actors=200))
    values, counts = np.unique(arch.final_epsilons, return_counts=True)
    assert set(values) <= {0.01, 0.1, 0.5}
    w = arch.make_actor_learner(0, ShardedParameterServer([arch.make_shard(0)]))
    w._global = 50_000
    assert w.epsilon() == pytest.approx(1.0 + 0.5 * (w.final_epsilon - 1.0))  # preset anneals over 100k


def test_gaussian_policy_on_pendulum_runs(tmp_path):
    summary = train(small_cfg(tmp_path, frames=600, env="Pendulum-v1", preset="a3c-pendulum"), live=False)
    assert summary["updates"] >= 100 and summary["eval_return_mean"] < 0


def test_lstm_variant_runs_and_carries_state(tmp_path):
    arch = A3C(small_cfg(tmp_path, **{"net.lstm": True}))
    w = arch.make_actor_learner(0, ShardedParameterServer([arch.make_shard(0)]))
    w.run(3, 0)
    assert w.state is not None and float(w.state[0].detach().abs().sum()) > 0


class Ticks(gym.Env):
    """Observation (t / 4, 1) after t steps, whatever the action; reward 1 per step; the episode
    terminates after `terminal_at` steps (never if None: a TimeLimit cuts it)."""

    observation_space = gym.spaces.Box(0, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, terminal_at=None):
        self.terminal_at, self.t = terminal_at, 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self.obs(self.t), {}

    def step(self, action):
        self.t += 1
        return self.obs(self.t), 1.0, self.t == self.terminal_at, False, {}

    @staticmethod
    def obs(t):
        return np.array([t / 4, 1.0], np.float32)


def lstm_rollout_returns(monkeypatch, make_env):
    """One rollout (t_max 5, gamma 0.5) of an LSTM A3C learner on Ticks; its n-step returns, and a
    copy of the net as the rollout saw it."""
    torch.manual_seed(0)
    net = PolicyValueNet((2,), 2, hidden=(8,), lstm=True, lstm_units=4)
    before = copy.deepcopy(net)
    store = ShardedParameterServer(local_shards(flatten(net), 1, optimizer="sgd", lr=0.1))
    seen = []

    def spy(logits, actions, returns, *rest):
        seen.append(returns)
        return a3c_loss(logits, actions, returns, *rest)

    monkeypatch.setattr("distrl.components.actor_learner.a3c_loss", spy)
    w = ActorLearner(make_env, net, store, algo="a3c", t_max=5, gamma=0.5)
    w.run(1, 0)
    assert w.episodes == 1 and w.steps == 3 and not w.state[0].any()  # the episode ended; the state reset after
    return seen[0].tolist(), before


def test_lstm_bootstraps_a_time_limit_cut_from_the_state_the_rollout_reached(monkeypatch):
    returns, net = lstm_rollout_returns(monkeypatch, lambda: gym.wrappers.TimeLimit(Ticks(), max_episode_steps=3))
    with torch.no_grad():
        state = None  # the LSTM state after observing s0, s1, s2 from zeros, as the rollout did
        for t in range(3):
            _, _, state = net(torch.as_tensor(Ticks.obs(t))[None], state)
        s3 = torch.as_tensor(Ticks.obs(3))[None]
        v = float(net(s3, state)[1][0])
        v_zero = float(net(s3, net.initial_state(1))[1][0])
    assert abs(v - v_zero) > 1e-3  # the test tells the two apart
    # R3 = 1 + 0.5 v, R2 = 1 + 0.5 R3, R1 = 1 + 0.5 R2
    assert returns == pytest.approx([1.75 + 0.125 * v, 1.5 + 0.25 * v, 1.0 + 0.5 * v], abs=1e-6)


def test_lstm_terminal_episode_does_not_bootstrap(monkeypatch):
    returns, _ = lstm_rollout_returns(monkeypatch, lambda: Ticks(terminal_at=3))
    assert returns == pytest.approx([1.75, 1.5, 1.0])  # 1 + 0.5 (1 + 0.5 * 1), ...


def test_bad_combinations_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="algo=sarsa needs discrete actions"):
        A3C(small_cfg(tmp_path, env="Pendulum-v1", preset="a3c-pendulum", algo="sarsa"))
    with pytest.raises(ConfigError, match="net.lstm"):
        small_cfg(tmp_path, algo="nstep_q", **{"net.lstm": True})
    with pytest.raises(ConfigError, match="invalid value 'dqn' for algo"):
        small_cfg(tmp_path, algo="dqn")
    with pytest.raises(ConfigError, match=r"net.activation=elu sets the units of A3C's Atari network only.*drop"):
        A3C(small_cfg(tmp_path, **{"net.activation": "elu"}))  # CartPole gets an MLP
    with pytest.raises(ConfigError, match="net.activation"):
        small_cfg(tmp_path, **{"net.activation": "gelu"})


def test_resume_and_eval(tmp_path, capsys):
    first = train(small_cfg(tmp_path, frames=800), live=False)
    run = tmp_path / "run"
    assert main(["train", "a3c", "--resume", str(run), "--max-frames", "1600", "--quiet"]) == 0
    second = json.loads((run / "summary.json").read_text())
    assert second["frames"] >= 1600 and second["updates"] > first["updates"]
    assert main(["eval", str(run), "--episodes", "2"]) == 0
    assert json.loads((run / "eval.json").read_text())["episodes"] == 2


@pytest.mark.learning(seconds=70)
def test_a3c_inline_learns_cartpole(tmp_path):
    """The a3c-cartpole preset, up to 200k frames (seed 1: 499 measured at 200k), stopped at the first
    evaluation at 400 or more: inline the final evaluation is of those same parameters. On 2026-11-27 that was
    405 at 5.5k updates (39 s paired); on 2026-12-05 382.6 there and 408.8 at 26,882 (64 s alone, 72 s paired)."""
    cfg = C.build_config("a3c", "CartPole-v1", overrides={"seed": 1, "run_dir": str(tmp_path / "run"),
                                                          "eval_every": 2500, "stop_return": 400})
    assert cfg.max_frames == 200_000
    assert train(cfg, live=False)["eval_return_mean"] >= 400


@pytest.mark.learning(seconds=300)
def test_a3c_gaussian_policy_learns_pendulum(tmp_path):
    """The a3c-pendulum preset, up to 300k frames: a random policy scores about -1400 (seed 1: -439 measured
    at 300k); it stops at the first evaluation at -600 or more (-569 at 47k updates, 355 s paired)."""
    cfg = C.build_config("a3c", "Pendulum-v1", overrides={"seed": 1, "run_dir": str(tmp_path / "run"),
                                                          "eval_every": 3000, "stop_return": -600})
    assert train(cfg, live=False)["eval_return_mean"] >= -600


def test_rewards_are_scaled_for_learning_only(tmp_path):
    """reward_scale 0.1 on CartPole: the rollout's n-step returns are a tenth of the raw ones, the
    reported episode return is raw."""
    arch = A3C(small_cfg(tmp_path, **{"rl.reward_scale": 0.1, "rl.gamma": 0.5}))
    w = arch.make_actor_learner(0, ShardedParameterServer([arch.make_shard(0)]))
    seen = {}
    original = w._loss

    def spy(obs, actions, rewards, *rest):
        seen.setdefault("rewards", list(rewards))
        return original(obs, actions, rewards, *rest)

    w._loss = spy
    w.run(200, 0)
    assert seen["rewards"][0] == pytest.approx(0.1)
    assert all(r >= 8 for r in w.drain_returns())  # raw CartPole returns (>= 8 steps of reward 1)


def test_default_preset_follows_the_algorithm_and_the_action_space():
    assert C.build_config("a3c", "CartPole-v1").preset == "a3c-cartpole"
    assert C.build_config("a3c", "CartPole-v1", overrides={"algo": "sarsa"}).preset == "sarsa-cartpole"
    assert C.build_config("a3c", "CartPole-v1", overrides={"algo": "nstep_q"}).preset == "nstep-q-cartpole"
    assert C.build_config("a3c", "Pendulum-v1").preset == "a3c-pendulum"
    assert C.build_config("a3c", "ALE/Pong-v5", overrides={"algo": "nstep_q"}).preset == "a3c-atari"
