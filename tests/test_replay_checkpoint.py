"""replay.checkpoint=true: the replay is saved (compressed, atomically) with each checkpoint, only the
newest checkpoint's set is kept, and a restarted shard or --resume reloads exactly that set."""

from types import SimpleNamespace

import numpy as np

from distrl.checkpoint import replay_path, replay_set, save_checkpoint
from distrl.cli import main
from distrl.replay import PrioritizedSampler, ReplayTable


def _table(n):
    table = ReplayTable(1000, PrioritizedSampler(0.6, 0.4), seed=3)
    table.add({"obs": np.arange(n, dtype=np.float32)[:, None], "action": np.arange(n) % 2},
              priorities=np.linspace(0.1, 2.0, n))
    return table


def _checkpoint(run, step):
    save_checkpoint(run, step, {}, {"architecture": "apex", "shapes": {}})


def test_only_the_newest_checkpoints_replay_set_is_kept_and_loaded(tmp_path):
    for step, n in ((20, 5), (40, 7)):
        _table(n).save(replay_path(tmp_path, step, 0))
        _checkpoint(tmp_path, step)
    assert not replay_path(tmp_path, 20, 0).exists()  # rotated away with its checkpoint's turn
    _table(9).save(replay_path(tmp_path, 60, 0))  # saved, but its checkpoint was never written
    assert replay_set(tmp_path) == {0: replay_path(tmp_path, 40, 0)}  # the newest complete set


class ShardWiring:
    """What a ReplayShard asks of its wiring: the table's arguments, and whether and where to reload."""

    def __init__(self, *args, run_dir=None):
        self.args = args
        self.cfg = SimpleNamespace(run_dir=run_dir, replay=SimpleNamespace(checkpoint=run_dir is not None))

    def replay_args(self, index):
        return self.args


def test_a_restarted_replay_shard_reloads_the_saved_set(tmp_path):
    from distrl.components.workers import ReplayShard

    saved = _table(7)
    saved.save(replay_path(tmp_path, 40, 0))
    _checkpoint(tmp_path, 40)
    shard = ReplayShard(ShardWiring(1000, PrioritizedSampler(0.6, 0.4), None, 99, (), run_dir=str(tmp_path)), 0)
    assert shard.restored()["path"] == str(replay_path(tmp_path, 40, 0)) and len(shard) == 7
    keys, batch, weights = shard.sample(64)
    expected = saved.sample(64)  # the same rng state was saved with it
    assert np.array_equal(keys, expected[0]) and np.allclose(weights, expected[2])
    assert np.array_equal(batch["obs"], expected[1]["obs"])
    fresh = ReplayShard(ShardWiring(1000, PrioritizedSampler(0.6, 0.4), None, 99, (), run_dir=str(tmp_path)), 1)  # no file for shard 1
    assert len(fresh) == 0 and fresh.restored()["path"] is None


def test_inline_apex_saves_its_replay_and_resume_reloads_it(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["--runtime", "inline", "--seed", "1", "--quiet", "--set", "replay.min_size=100",
            "--set", "checkpoint_every=20", "--set", "eval_episodes=0", "--set", "replay.checkpoint=true"]
    assert main(["train", "apex", "--env", "CartPole-v1", "--max-frames", "600", "--run-dir", str(run), *args]) == 0
    files = sorted(p.name for p in (run / "checkpoints").glob("replay-*.npz"))
    newest = sorted((run / "checkpoints").glob("ckpt-*.pt"))[-1]
    assert files == [newest.name.replace("ckpt", "replay").replace(".pt", "-00.npz")]
    size = len(ReplayTable.restore(run / "checkpoints" / files[0]))
    assert size >= 600 - 3 * 2  # every transition of the run (less the n-step tails still in the adders)
    capsys.readouterr()
    assert main(["train", "apex", "--resume", str(run), "--max-frames", "700", "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert f"replay: 1 shard(s) saved with it, {size:,} transitions" in first
