"""A replay table through the files a checkpoint keeps it in: saved by the checkpoint module, as the driver
saves a shard's set, and rebuilt from that file."""

from pathlib import Path

from distrl.checkpoint import load_replay, replay_path, save_checkpoint
from distrl.replay import ReplayTable


def save_table(table: ReplayTable, run: Path, step: int = 1, shard: int = 0) -> Path:
    save_checkpoint(run, step, {}, {"architecture": "apex", "shapes": {}}, replay={shard: table.state_dict()})
    return replay_path(run, step, shard)


def load_table(path: Path) -> ReplayTable:
    return ReplayTable.from_state(load_replay(path), str(path))
