"""Gorila DQN: the learner's safeguards and target refresh against a scripted parameter server, the
epsilon schedule, and inline runs (run directory, determinism, resume, a real CartPole training)."""

import csv
import json

import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.architectures.gorila.builder import Gorila
from distrl.cli import main
from distrl.components.learner import DQNLearner, LossOutlierFilter, ParamServerLearner
from distrl.errors import CheckpointError, ConfigError
from distrl.nets import make_q_network
from distrl.params.param_server import ShardedParameterServer, flatten, local_shards
from distrl.training import train

SMALL = {"replay.min_size": 100, "checkpoint_every": 100, "eval_episodes": 2, "log_every_s": 0.2,
         "bundle.updates": 1}


def small_cfg(tmp_path, frames=2000, **extra):
    return C.build_config("gorila", "CartPole-v1", overrides={**SMALL, "max_frames": frames, "seed": 3,
                                                              "run_dir": str(tmp_path / "run"), **extra})


def batch(n=8, reward=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return {"obs": rng.normal(size=(n, 4)).astype(np.float32), "next_obs": rng.normal(size=(n, 4)).astype(np.float32),
            "action": rng.integers(0, 2, n), "reward": np.full(n, reward, np.float32),
            "discount": np.full(n, 0.99, np.float32)}


class ScriptedPS:
    """A parameter server whose global count other learners advance by `others` per pull."""

    def __init__(self, net, others):
        self.flat, self.version, self.others = flatten(net), 0, others
        self.pushes, self.seen = [], {}

    def pull(self):
        self.version += self.others
        self.flat = self.flat + 1.0  # every pull sees new parameters
        self.seen[self.version] = self.flat.copy()
        return self.flat.copy(), np.array([self.version, self.version + 3])  # global = min over shards

    def push(self, grad, versions, wait=True):
        self.pushes.append(np.array(versions))

    def push_pull(self, grad, versions):
        self.push(grad, versions)
        return self.pull()


def ps_learner(others=0, target_update=100, pull_every=1, outlier=None):
    torch.manual_seed(0)
    net = make_q_network((4,), 2, dueling=False, hidden=(8,))
    cfg = C.build_config("gorila", "CartPole-v1").learner
    ps = ScriptedPS(net, others)
    return ParamServerLearner(DQNLearner(net, cfg, applies_gradients=False), ps, target_update=target_update, pull_every=pull_every,
                              outlier=outlier), ps


def test_target_refresh_follows_the_global_counter_not_local_steps():
    learner, ps = ps_learner(others=30, target_update=100)
    history = []
    for _ in range(10):
        learner.step(batch(), np.ones(8, np.float32))
        history.append((learner.global_updates, learner.target_refreshes))
    # The pulls see global counts 30, 60, ..., 330 (min over shards); the target is refreshed at the
    # first pull and on entering each multiple of 100 (at 120, 210, 300): 4 refreshes in 10 local steps.
    assert [g for g, _ in history] == list(range(60, 331, 30))
    assert [r for _, r in history] == [g // 100 + 1 for g, _ in history]
    np.testing.assert_allclose(flatten(learner.learner.target), ps.seen[300])  # what was pulled at 300
    assert learner.pushes == 10 and [int(v[0]) for v in ps.pushes] == list(range(30, 301, 30))


def test_no_refresh_without_global_progress_however_many_local_steps():
    learner, _ = ps_learner(others=0, target_update=5)
    for _ in range(50):
        learner.step(batch(), np.ones(8, np.float32))
    assert learner.target_refreshes == 1 and learner.steps == 50


def test_pull_every_k_steps_pushes_with_the_versions_pulled():
    learner, ps = ps_learner(others=1, pull_every=3)
    for _ in range(7):
        learner.step(batch(), np.ones(8, np.float32))
    # pulls before step 1 and after steps 3 and 6 -> global versions 1, 2, 3; each push carries the
    # versions of the parameters its gradient was computed on
    assert [int(v[0]) for v in ps.pushes] == [1, 1, 1, 2, 2, 2, 3]


def test_loss_outlier_is_dropped_not_pushed_and_counted():
    learner, ps = ps_learner(outlier=LossOutlierFilter(k=3.0, warmup=5))
    for i in range(5):
        learner.step(batch(seed=i), np.ones(8, np.float32))
    assert learner.pushes == 5
    metrics = learner.step(batch(reward=1e4), np.ones(8, np.float32))  # |loss| far above mean + 3 std
    assert metrics["pushed"] == 0.0 and learner.outlier.dropped == 1 and len(ps.pushes) == 5
    assert learner.counters()["dropped_outliers"] == 1


def test_stale_push_is_dropped_by_the_shard_and_counted():
    net = make_q_network((4,), 2, dueling=False, hidden=(8,))
    ps = ShardedParameterServer(local_shards(flatten(net), 2, staleness_bound=1))
    grad = np.ones(ps.n_params, np.float32)
    for _ in range(3):
        ps.push(grad, [0, 0])  # versions 0 and 1 accepted (lag 0, 1); at version 2 a lag of 2 > 1
    assert ps.counters() == {"version": 2, "max_version": 2, "applied": 4, "dropped_stale": 2}


def test_epsilon_anneals_over_global_updates():
    arch = Gorila(C.build_config("gorila", "CartPole-v1", "gorila-atari"))
    assert arch.epsilon(0) == 1.0
    assert arch.epsilon(500_000) == pytest.approx(0.55)
    assert arch.epsilon(1_000_000) == pytest.approx(0.1) and arch.epsilon(5_000_000) == pytest.approx(0.1)


def test_actor_takes_its_epsilon_from_the_version_it_pulls():
    cfg = C.build_config("gorila", "CartPole-v1", overrides={"actor.epsilon_updates": 100})
    arch = Gorila(cfg)
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(cfg.ps.shards)])
    from distrl.replay import ReplayTable
    actor = arch.make_actor(0, ReplayTable(1000), ps)
    assert actor.epsilons[0] == pytest.approx(1.0)
    for _ in range(50):
        ps.push(np.zeros(ps.n_params, np.float32), [s.version for s in ps.shards])
    actor.pull()
    assert actor.epsilons[0] == pytest.approx(1.0 + 0.5 * (0.04 - 1.0))


def test_config_checks_and_presets():
    cfg = C.build_config("gorila", "ALE/Pong-v5")
    assert cfg.preset == "gorila-atari" and cfg.learner.optimizer == "adagrad" and cfg.ps.shards == 31
    assert cfg.learner.target_update == 60_000 and cfg.actor.epsilon_updates == 1_000_000
    assert cfg.learner.n_step == 1 and not cfg.learner.double_q and not cfg.net.dueling
    # the small-machine Atari preset: DQN's 1M-frame anneal and 50,000-transition start over its 2 bundles
    small = C.build_config("gorila", "ALE/Pong-v5", preset="gorila-atari-small")
    frames_per_update = small.bundle.actor_steps // small.bundle.updates * 4  # Atari's frame skip
    assert small.actor.epsilon_updates * frames_per_update == 1_000_000
    assert small.replay.min_size * small.actors == 50_000 and small.ps.shards == 1
    with pytest.raises(ConfigError, match="replay.mode"):
        C.build_config("gorila", "CartPole-v1", overrides={"replay.mode": "shared"})
    with pytest.raises(ConfigError, match="learner.optimizer"):
        C.build_config("gorila", "CartPole-v1", overrides={"learner.optimizer": "lamb"})
    with pytest.raises(ConfigError, match="unknown config key 'learner.prefetch'"):
        C.build_config("gorila", "CartPole-v1", overrides={"learner.prefetch": 2})
    with pytest.raises(ConfigError, match="is for 'apex'"):
        C.build_config("gorila", "CartPole-v1", "apex-cartpole")


def test_more_shards_than_parameters_is_a_config_error():
    cfg = C.build_config("gorila", "CartPole-v1", overrides={"ps.shards": 10**7})
    with pytest.raises(ConfigError, match="shards"):
        Gorila(cfg)


def test_inline_run_directory_and_both_drops_logged(tmp_path):
    summary = train(small_cfg(tmp_path), live=False)
    run = tmp_path / "run"
    assert summary["architecture"] == "gorila" and summary["frames"] >= 2000 and summary["updates"] > 0
    assert summary["eval_episodes"] == 2
    # the same faults as on Ray (one driver): nothing restarts in one process
    assert set(summary["faults"]) == {"dropped_stale", "dropped_outliers", "bundle_restarts", "ps_restarts", "ps_waits"}
    assert summary["faults"]["bundle_restarts"] == summary["faults"]["ps_restarts"] == summary["faults"]["ps_waits"] == 0
    rows = list(csv.DictReader(open(run / "metrics.csv")))
    assert {"dropped_outliers", "dropped_stale", "learner_updates_per_s"} <= set(rows[0])
    assert int(rows[-1]["dropped_outliers"]) == summary["faults"]["dropped_outliers"]
    assert list((run / "checkpoints").glob("ckpt-*.pt"))


def test_inline_runs_are_deterministic(tmp_path):
    a = train(small_cfg(tmp_path / "a", frames=1200), live=False)
    b = train(small_cfg(tmp_path / "b", frames=1200), live=False)
    assert a["eval_returns"] == b["eval_returns"] and a["updates"] == b["updates"]


def test_global_replay_mode_shares_one_table(tmp_path):
    summary = train(small_cfg(tmp_path, frames=1200, **{"replay.mode": "global"}), live=False)
    # One table holds every bundle's transitions (local mode would hold the same number in two).
    assert summary["updates"] > 0 and summary["frames"] >= 1200


def test_resume_restores_the_shards_and_counts_on(tmp_path, capsys):
    first = train(small_cfg(tmp_path, frames=1500), live=False)
    run = tmp_path / "run"
    assert main(["train", "gorila", "--resume", str(run), "--max-frames", "2500", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "resumed from" in out
    second = json.loads((run / "summary.json").read_text())
    assert second["frames"] >= 2500 and second["updates"] > first["updates"]


def test_checkpoint_with_other_shard_count_is_refused(tmp_path):
    train(small_cfg(tmp_path, frames=600), live=False)
    cfg = small_cfg(tmp_path, frames=600, **{"ps.shards": 3})
    with pytest.raises(CheckpointError, match="ps.shards=2"):
        Gorila(cfg).topology().checkpoints.restore(tmp_path / "run")


def test_eval_command_reads_the_shards(tmp_path, capsys):
    train(small_cfg(tmp_path, frames=600), live=False)
    assert main(["eval", str(tmp_path / "run"), "--episodes", "2"]) == 0
    result = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert result["episodes"] == 2 and result["checkpoint"].endswith(".pt")
    oldest = sorted((tmp_path / "run" / "checkpoints").glob("ckpt-*.pt"))[0]  # an older one: the shards' version
    assert main(["eval", str(tmp_path / "run"), "--episodes", "1", "--checkpoint", str(oldest)]) == 0
    assert json.loads((tmp_path / "run" / f"eval-{oldest.stem}.json").read_text())["updates"] == \
        int(oldest.stem.split("-")[1])


def test_atari_smoke_uint8_nature_cnn(tmp_path):
    """The Atari path: Nature CNN over 4 shards, uint8 stacks compressed in a bundle's table, 4 frames per step."""
    cfg = C.build_config("gorila", "ALE/Pong-v5", overrides={
        "actors": 1, "seed": 0, "replay.min_size": 32, "learner.batch_size": 4, "ps.shards": 4,
        "torch_threads": 1, "bundle.actor_steps": 20})
    arch = Gorila(cfg)
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(4)])
    bundle = arch.make_bundle(0, ps, arch.make_replay(0))
    for _ in range(3):
        bundle.run_round()
    assert bundle.actor.frames == 240 and bundle.learner.steps == 2 and ps.updates() == 2  # from round 2 on
    assert bundle.replay.nbytes() / len(bundle.replay) < 8 * 1024
    _, sample, _ = bundle.replay.sample(2)
    assert sample["obs"].dtype.name == "uint8" and sample["obs"].shape == (2, 4, 84, 84)


@pytest.mark.learning(seconds=140)
def test_gorila_inline_learns_cartpole(tmp_path):
    """The preset's 2 bundles and 2 shards, up to 80k frames, seed 1 (deterministic inline), stopped at the
    first evaluation at 400 or more (500 at 31.5k server updates, 163 s paired)."""
    cfg = C.build_config("gorila", "CartPole-v1", overrides={"seed": 1, "run_dir": str(tmp_path / "run"),
                                                             "eval_every": 1000, "stop_return": 400})
    summary = train(cfg, live=False)
    assert summary["eval_return_mean"] >= 400, summary


def test_bundle_actor_shares_its_learners_pulls():
    cfg = C.build_config("gorila", "CartPole-v1", overrides={"replay.min_size": 10, "bundle.updates": 1})
    arch = Gorila(cfg)
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(cfg.ps.shards)])
    from distrl.replay import ReplayTable
    bundle = arch.make_bundle(0, ps, ReplayTable(1000))
    assert bundle.learner.pulls == 0 and bundle.actor.pulls == 1  # before learning: its own pull
    for _ in range(5):
        bundle.run_round()
    learner_pulls = bundle.learner.pulls
    assert learner_pulls > 0
    source = bundle.actor.source
    params, version = source.latest()  # the learner's latest pull, no call to the server
    assert version == bundle.learner.global_updates
    for key, value in bundle.learner.learner.online.state_dict().items():
        assert torch.equal(params[key], value)
    assert source.latest() is None  # nothing new until the learner pulls again

