"""replay.checkpoint=true: the replay is saved (compressed, atomically) with each checkpoint, only the
newest checkpoint's set is kept, and a restarted shard or --resume reloads exactly that set."""


import numpy as np
import pytest

from distrl.checkpoint import replay_path, replay_set
from distrl.cli import main
from distrl.components.workers import ReplayShard
from distrl.errors import NotRestored
from distrl.replay import PrioritizedSampler, ReplayTable
from tests.replay_files import load_table, save_table


def _table(n):
    table = ReplayTable(1000, PrioritizedSampler(0.6, 0.4), seed=3)
    table.add({"obs": np.arange(n, dtype=np.float32)[:, None], "action": np.arange(n) % 2},
              priorities=np.linspace(0.1, 2.0, n))
    return table


def test_only_the_newest_checkpoints_replay_set_is_kept_and_loaded(tmp_path):
    for step, n in ((20, 5), (40, 7)):
        save_table(_table(n), tmp_path, step)
    assert not replay_path(tmp_path, 20, 0).exists()  # rotated away with its checkpoint's turn
    np.savez(replay_path(tmp_path, 60, 0), **_table(9).state_dict())  # saved, but its checkpoint never written
    assert replay_set(tmp_path) == {0: replay_path(tmp_path, 40, 0)}  # the newest complete set
    assert len(load_table(replay_set(tmp_path)[0])) == 7


class TableArgs:
    """What a ReplayShard is built from: the table's arguments."""

    def __init__(self, *args):
        self.args = args

    def replay_args(self, index):
        return self.args


class Restarted:
    """A transport whose role is a restart of one that died."""

    @staticmethod
    def restarted():
        return True


def test_a_restarted_replay_shard_takes_its_set_in_pieces_from_the_driver(monkeypatch):
    from distrl.components import chunks
    from distrl.transport import InProcess

    monkeypatch.setattr(chunks, "CHUNK", 100)  # many pieces for every array
    saved = _table(7)
    first = ReplayShard(TableArgs(1000, PrioritizedSampler(0.6, 0.4), None, 99, ()), 0, transport=InProcess)
    assert not first.needs_state()  # a new run's shard starts empty and needs nothing
    shard = ReplayShard(TableArgs(1000, PrioritizedSampler(0.6, 0.4), None, 99, ()), 0, transport=Restarted)
    assert shard.needs_state() and len(shard) == 0
    shard.add({"obs": np.zeros((2, 1), np.float32), "action": np.zeros(2, np.int64)})  # serves as empty meanwhile
    with pytest.raises(NotRestored):  # its set is not the run's until the driver handed it back
        chunks.fetch(InProcess, shard)
    chunks.send(InProcess, shard, saved.state_dict())
    shard.restore({"source": "ckpt-40"}, "ckpt-40")
    assert not shard.needs_state() and shard.restored()["path"] == "ckpt-40" and len(shard) == 7
    fetched, whole = chunks.fetch(InProcess, shard), shard.state_dict()  # and back to the driver, in pieces
    assert fetched.keys() == whole.keys() and all(np.array_equal(fetched[k], whole[k]) for k in whole)
    keys, batch, weights = shard.sample(64)
    expected = saved.sample(64)  # the same rng state was saved with it
    assert np.array_equal(keys, expected[0]) and np.allclose(weights, expected[2])
    assert np.array_equal(batch["obs"], expected[1]["obs"])


def test_inline_apex_saves_its_replay_and_resume_reloads_it(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["--runtime", "inline", "--seed", "1", "--quiet", "--set", "replay.min_size=100",
            "--set", "checkpoint_every=20", "--set", "eval_episodes=0", "--set", "replay.checkpoint=true"]
    assert main(["train", "apex", "--env", "CartPole-v1", "--max-frames", "600", "--run-dir", str(run), *args]) == 0
    files = sorted(p.name for p in (run / "checkpoints").glob("replay-*.npz"))
    newest = sorted((run / "checkpoints").glob("ckpt-*.pt"))[-1]
    assert files == [newest.name.replace("ckpt", "replay").replace(".pt", "-00.npz")]
    size = len(load_table(run / "checkpoints" / files[0]))
    assert size >= 600 - 3 * 2  # every transition of the run (less the n-step tails still in the adders)
    capsys.readouterr()
    assert main(["train", "apex", "--resume", str(run), "--max-frames", "700", "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert f"replay: 1 shard(s) saved with it, {size:,} transitions" in first
