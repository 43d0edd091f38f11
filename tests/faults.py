"""A fault hook the Ray fault tests hand the driver (conftest's train_with_hook): Gorila's and BA3C's kill one
process of a role, then a parameter shard."""

import os
import signal
from pathlib import Path

import ray

from distrl.checkpoint import list_checkpoints


def kill_one_then_a_shard(run_dir: Path, role: str, after_frames: int) -> tuple:
    """A hook that SIGKILLs `role`'s first process once more than `after_frames` frames are counted, then
    parameter shard 1 once a checkpoint exists; and the dict it fills: the frames at each kill (keys `role`
    and "shard") and the newest checkpoint's step at the shard's death ("checkpoint")."""
    seen: dict = {}

    def hook(state):
        if role not in seen and state["totals"].get("frames", 0) > after_frames:
            os.kill(ray.get(state[role][0].pid.remote()), signal.SIGKILL)
            seen[role] = state["totals"]["frames"]
        elif role in seen and "shard" not in seen:
            checkpoints = list_checkpoints(run_dir)
            if checkpoints:
                seen["checkpoint"] = int(checkpoints[-1].stem.split("-")[1])
                os.kill(ray.get(state["ps"][1].pid.remote()), signal.SIGKILL)
                seen["shard"] = state["totals"]["frames"]

    return hook, seen
