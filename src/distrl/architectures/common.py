"""What every DQN-family wiring does first: probe the env, pick torch threads, derive seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from distrl.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from distrl.envs import is_atari, make_env
from distrl.errors import CheckpointError, ConfigError
from distrl.nets import image_kind


def probe_discrete_env(env_id: str, architecture: str) -> tuple[tuple[int, ...], int]:
    """(observation shape, number of actions); a bad id or a continuous env fails here, before any file is written."""
    probe = make_env(env_id, "eval")
    try:
        if not isinstance(probe.action_space, spaces.Discrete):
            raise ConfigError(f"{architecture} needs a discrete action space, but {env_id} has "
                              f"{type(probe.action_space).__name__}: use a discrete env such as "
                              "CartPole-v1 or ALE/Pong-v5")
        shape = tuple(probe.observation_space.shape)
        image_kind(shape)  # an observation shape no network takes fails here too
        return shape, int(probe.action_space.n)
    finally:
        probe.close()


def frame_skip(env_id: str) -> int:
    """Frames are emulator frames, as in the papers: 4 per agent step on Atari."""
    return 4 if is_atari(env_id) else 1


def set_torch_threads(torch_threads: int, obs_shape: tuple[int, ...]) -> None:
    if torch_threads or image_kind(obs_shape) in (None, "minatar"):
        # Small nets (MLPs, the MinAtar CNN) run fastest on one thread; more only add synchronisation
        # (20x slower seen here with MLPs).
        torch.set_num_threads(torch_threads or 1)


def spawn_seeds(seed: int, n: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


def restore_shards(run_dir: Path, architecture: str, shapes: dict, shards: int, required: bool = True) -> dict | None:
    """The latest checkpoint of a parameter-server run (payload "ps": one state per shard), with its
    path; None if there is none and it is not required. Another shard count is refused."""
    if not required and not list_checkpoints(run_dir):
        return None
    path = latest_checkpoint(run_dir)
    data = load_checkpoint(path, architecture, shapes)
    if len(data["ps"]) != shards:
        raise CheckpointError(f"checkpoint {path} holds {len(data['ps'])} parameter shards, this run has "
                              f"{shards}: resume with --set ps.shards={len(data['ps'])}")
    return {**data, "path": str(path)}


def shards_policy_params(arch: Any, run_dir: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """The latest checkpoint's parameters (the shards' values joined) as a state dict, for `distrl eval`."""
    data = arch.restore(run_dir)
    flat = torch.cat([s["values"] for s in data["ps"]]).numpy()
    return arch.params(flat), {"checkpoint": data["path"], "updates": min(int(s["version"]) for s in data["ps"])}
