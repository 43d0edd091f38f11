"""Distributed BA3C: the chief's rounds (hand-checked means, late gradients), Adam with the paper's
values on shards, the batched worker's data points (n-step returns, terminal and time-limit cuts),
and inline runs (resume, a real CartPole training)."""

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.architectures.ba3c.builder import BA3C
from distrl.components.batched_worker import BatchedWorker
from distrl.errors import ConfigError
from distrl.nets import PolicyValueNet
from distrl.params.param_server import ShardedParameterServer, local_shards
from distrl.params.sync_chief import SyncChief, workers_needed
from distrl.training import train


def small_cfg(tmp_path, frames=3000, **extra):
    return C.build_config("ba3c", "CartPole-v1", overrides={
        "max_frames": frames, "seed": 3, "run_dir": str(tmp_path / "run"), "eval_episodes": 2,
        "log_every_s": 0.2, "checkpoint_every": 20, **extra})


# ---- the chief ---------------------------------------------------------------------------------

def test_workers_needed_is_the_ceiling_of_the_fraction():
    assert workers_needed(2, 0.9) == 2
    assert workers_needed(10, 0.9) == 9
    assert workers_needed(64, 0.9) == 58
    assert workers_needed(2, 0.5) == 1
    assert workers_needed(4, 0.01) == 1


def test_chief_applies_the_mean_of_a_round_and_numbers_rounds():
    clock = iter([0.0, 2.5, 3.0]).__next__
    chief = SyncChief(workers=2, fraction=1.0, clock=clock)
    assert chief.push(np.array([1.0, 2.0]), round=0, worker=0) is None  # round 0 waits for worker 1
    assert chief.round == 0
    mean = chief.push(np.array([3.0, -2.0]), round=0, worker=1)
    np.testing.assert_allclose(mean, [2.0, 0.0])                       # (1+3)/2, (2-2)/2
    assert chief.round == 1
    assert chief.drain_waits() == [2.5]                                 # opened at 0.0, closed at 2.5
    # worker 0 already pushed for round 1: a second push in the same round is dropped
    assert chief.push(np.array([5.0, 5.0]), round=1, worker=0) is None
    assert chief.push(np.array([7.0, 7.0]), round=1, worker=0) is None
    assert chief.counters() == {"rounds": 1, "accepted": 3, "dropped_late": 1}
    np.testing.assert_allclose(chief.push(np.array([1.0, 1.0]), round=1, worker=1), [3.0, 3.0])
    assert chief.round == 2


def test_late_gradient_is_dropped_and_counted_never_applied():
    chief = SyncChief(workers=2, fraction=0.5)
    np.testing.assert_allclose(chief.push(np.array([4.0]), round=0, worker=0), [4.0])  # 1 of 2 closes it
    assert chief.push(np.array([100.0]), round=0, worker=1) is None     # computed on round 0: late
    np.testing.assert_allclose(chief.push(np.array([-2.0]), round=1, worker=1), [-2.0])  # not mixed in
    assert chief.counters() == {"rounds": 2, "accepted": 2, "dropped_late": 1}
    with pytest.raises(ValueError, match="round 5"):
        chief.push(np.array([1.0]), round=5, worker=0)


def test_chief_mean_is_what_the_parameter_server_applies():
    """Two workers' gradients through the chief into SGD shards (lr 1): parameters move by -mean."""
    values = np.array([1.0, 2.0, 3.0], np.float32)
    ps = ShardedParameterServer(local_shards(values, 2, optimizer="sgd", lr=1.0))
    chief = SyncChief(workers=2, fraction=0.9)
    flat, versions = ps.pull()
    for worker, grad in enumerate([np.array([1.0, 0.0, 4.0]), np.array([3.0, 2.0, -2.0])]):
        mean = chief.push(grad, int(versions.min()), worker)
    ps.push(mean, versions)
    flat, versions = ps.pull()
    np.testing.assert_allclose(flat, [1.0 - 2.0, 2.0 - 1.0, 3.0 - 1.0])
    assert versions.tolist() == [1, 1]  # one update per round on every shard: version = round


def test_adam_on_shards_with_the_paper_values_equals_torch_adam(tmp_path):
    # the paper's values (the CartPole preset has 2e-3, annealed)
    cfg = small_cfg(tmp_path, **{"ps.shards": 3, "learner.lr": 1e-3, "learner.anneal": False})
    arch = BA3C(cfg)
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(3)])
    start = ps.pull()[0]
    whole = torch.tensor(start, requires_grad=True)
    reference = torch.optim.Adam([whole], lr=1e-3, eps=1e-8, betas=(0.8, 0.75))
    rng = np.random.default_rng(0)
    for step in range(5):
        grad = rng.normal(size=start.size).astype(np.float32)
        ps.push(grad, ps.pull()[1])
        whole.grad = torch.from_numpy(grad)
        reference.step()
        if step == 0:  # first Adam step, by hand: m_hat = g, v_hat = g^2, so theta -= lr * g / (|g| + eps)
            np.testing.assert_allclose(ps.pull()[0], start - 1e-3 * grad / (np.abs(grad) + 1e-8), atol=1e-7)
    np.testing.assert_allclose(ps.pull()[0], whole.detach().numpy(), atol=1e-6)


def inline_round(r: int, workers: int = 10, needed: int = 9) -> list[int]:
    """Who closes round r inline: workers push in turn 0, 1, ..., each for the round open when it pulled,
    so round r is the `needed` workers from (needed * r) mod workers on, cyclically."""
    return [(needed * r + k) % workers for k in range(needed)]


def test_every_worker_is_applied_in_some_round_at_fraction_0_9():
    """10 workers, f = 0.9: ceil(9.0) = 9 pushes close a round. Inline, each worker pulls the newest
    parameters before its gradient, so the 10th pushes for the next round instead of being late. Worker
    i pushes the one-hot e_i, so a round's mean is 1/9 on each of its workers and 0 on the other."""
    chief, applied, order = SyncChief(workers=10, fraction=0.9), set(), iter(list(range(10)) * 18)
    for r in range(20):
        means = [chief.push(np.eye(10)[i], r, i) for i in [next(order) for _ in range(9)]]
        assert all(m is None for m in means[:8])
        np.testing.assert_allclose(means[8], np.isin(np.arange(10), inline_round(r)) / 9)
        applied |= set(inline_round(r))
    assert applied == set(range(10))
    assert chief.counters() == {"rounds": 20, "accepted": 20 * 9, "dropped_late": 0}


class RecordingChief(SyncChief):
    """Notes (round, worker) for every gradient it accepts."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.applied: list[tuple[int, int]] = []

    def push(self, grad, round, worker):
        before = self.accepted
        mean = super().push(grad, round, worker)
        if self.accepted > before:
            self.applied.append((round, worker))
        return mean


# ---- the batched worker ------------------------------------------------------------------------

class Steps(gym.Env):
    """Reward 1 per step; the episode ends after 3 steps (terminated, or truncated by a time limit)."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, truncate: bool):
        self.truncate, self.t = truncate, 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        end = self.t == 3
        return np.zeros(2, np.float32), 1.0, end and not self.truncate, end and self.truncate, {}


def constant_value_worker(value, truncate, t_max=5, n_sim=2, batch_size=4):
    net = PolicyValueNet((2,), 2, hidden=(4,))
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.value.bias.fill_(value)  # V(s) = value everywhere, uniform policy
    return BatchedWorker(lambda i: Steps(truncate), n_sim, net, t_max=t_max, batch_size=batch_size, gamma=0.5)


def test_worker_returns_stop_at_a_terminal_and_bootstrap_at_the_rollout_end():
    worker = constant_value_worker(value=4.0, truncate=False)
    worker._rollout()
    # env steps 1..3 end the episode (terminal: no bootstrap), steps 4..5 start the next and
    # bootstrap from V = 4: R5 = 1 + 0.5 * 4 = 3, R4 = 1 + 0.5 * 3 = 2.5
    expected = [1.75, 1.5, 1.0, 2.5, 3.0]
    returns = np.concatenate(worker._returns).reshape(5, 2)  # [T, N]: both envs alike
    np.testing.assert_allclose(returns, np.array([expected, expected]).T)
    assert worker.counters()["episodes"] == 2 and worker.counters()["frames"] == 10


def test_worker_bootstraps_a_time_limit_cut_from_the_final_value():
    worker = constant_value_worker(value=4.0, truncate=True)
    worker._rollout()
    # truncated at step 3: R3 = 1 + 0.5 * V(final) = 3, R2 = 2.5, R1 = 2.25; steps 4, 5 as above
    expected = [2.25, 2.5, 3.0, 2.5, 3.0]
    np.testing.assert_allclose(np.concatenate(worker._returns).reshape(5, 2)[:, 0], expected)


def test_worker_gradient_takes_batch_size_data_points_and_keeps_the_rest():
    worker = constant_value_worker(value=0.0, truncate=False, t_max=5, n_sim=2, batch_size=4)
    grad = worker.gradient()  # one rollout: 10 data points, 4 used
    assert worker._queued == 6 and grad.shape == (sum(p.numel() for p in worker.net.parameters()),)
    worker.gradient()
    worker.gradient()  # 2 left: a second rollout first
    assert worker._queued == 10 - 4 + 10 - 8 and worker.counters()["data_points"] == 12
    assert worker.counters()["gradients"] == 3 and worker.counters()["steps"] == 20


# ---- configuration, the network, runs ----------------------------------------------------------

def test_ba3c_presets_and_bad_values():
    cfg = C.build_config("ba3c", "ALE/Pong-v5")
    assert cfg.preset == "ba3c-atari" and cfg.actors == 64 and cfg.ps.shards == 4
    assert (cfg.learner.lr, cfg.learner.eps, cfg.learner.beta1, cfg.learner.beta2) == (1e-3, 1e-8, 0.8, 0.75)
    assert (cfg.worker.n_sim, cfg.worker.batch_size, cfg.sync.fraction, cfg.net.hidden) == (10, 32, 0.9, (128,))
    with pytest.raises(ConfigError, match="sync.mode"):
        C.build_config("ba3c", "CartPole-v1", overrides={"sync.mode": "semi"})
    with pytest.raises(ConfigError, match="sync.fraction"):
        C.build_config("ba3c", "CartPole-v1", overrides={"sync.fraction": 0})
    with pytest.raises(ConfigError, match="discrete"):
        BA3C(C.build_config("ba3c", "Pendulum-v1"))


def test_ba3c_atari_network_has_the_papers_shape():
    """4 convolutions with pooling, then 128 units: 304,455 weights for Pong (the paper's 332,295
    counts 12 input channels, RGB frames; distrl stacks 4 grey frames, 27,840 fewer in conv0 and biases)."""
    net = BA3C(C.build_config("ba3c", "ALE/Pong-v5", overrides={"actors": 2})).make_net()
    assert sum(p.numel() for p in net.parameters()) == 304_455
    logits, value, _ = net(torch.zeros(3, 4, 84, 84, dtype=torch.uint8))
    assert logits.shape == (3, 6) and value.shape == (3,)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_inline_run_resumes_rounds_and_counts(tmp_path, mode):
    cfg = small_cfg(tmp_path, frames=3000, **{"sync.mode": mode})
    first = train(cfg, live=False)
    assert first["updates"] >= 3000 // (2 * 32 + 50)  # rounds: each needs 2 gradients of 32 data points
    cfg.max_frames = 5000
    second = train(cfg, resume=True, live=False)
    assert second["resumed_from"] and second["updates"] > first["updates"] and second["frames"] >= 5000
    meta = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert meta["frames"] == second["frames"]


def test_inline_sync_run_applies_every_worker_in_turn_and_drops_none(tmp_path, monkeypatch):
    chiefs = []

    def make_chief(self, round=0):
        chiefs.append(RecordingChief(self.cfg.actors, self.cfg.sync.fraction, round=round))
        return chiefs[-1]

    monkeypatch.setattr(BA3C, "make_chief", make_chief)
    summary = train(small_cfg(tmp_path, frames=4000, actors=10, eval_episodes=0, **{"sync.fraction": 0.9}), live=False)
    applied = chiefs[0].applied
    rounds = sorted({r for r, _ in applied})
    assert len(rounds) >= 10 and {w for _, w in applied} == set(range(10))
    for r in rounds[:-1]:  # the last round may still be open at the end
        assert [w for q, w in applied if q == r] == inline_round(r)
    assert chiefs[0].dropped_late == 0 and summary["faults"]["dropped_late"] == 0


@pytest.mark.learning(seconds=10)
def test_ba3c_inline_learns_cartpole(tmp_path):
    cfg = C.build_config("ba3c", "CartPole-v1", overrides={"seed": 1, "run_dir": str(tmp_path / "run"),
                                                           "eval_every": 250, "stop_return": 400})
    result = train(cfg, live=False)
    assert result["eval_return_mean"] >= 400, result


@pytest.mark.parametrize("arch", ["a3c", "ba3c"])
def test_an_inline_run_is_the_same_whenever_its_evaluations_happen(arch, tmp_path):
    """The driver starts an evaluation at the first log after eval_every updates, so when it happens is the
    clock's choice. Its parameters come from a net built afresh, which seeds torch; A3C's and BA3C's workers
    sample actions from torch's RNG, so a run was not repeatable until that build kept the RNG as it was.
    Here one run evaluates as often as it may (a log every tick) and one never mid-run: the same parameters."""
    finals = []
    for log_every_s in (1e-6, 1e9):
        run = tmp_path / f"log{log_every_s:g}"
        cfg = C.build_config(arch, "CartPole-v1", overrides={
            "max_frames": 2500, "seed": 3, "run_dir": str(run), "eval_episodes": 1, "eval_every": 5,
            "log_every_s": log_every_s, "checkpoint_every": 10**9})
        train(cfg, live=False)
        evaluations = (run / "evaluations.csv").read_text().count("\n") - 1  # the final one is a row too
        assert evaluations >= 3 if log_every_s < 1 else evaluations == 1
        finals.append(make_architecture(cfg).policy_params(run)[0])
    assert finals[0].keys() == finals[1].keys()
    for k in finals[0]:
        torch.testing.assert_close(finals[0][k], finals[1][k], rtol=0, atol=0)
