"""Atomic checkpoints (write a temp file, then rename) loaded with torch.load(weights_only=True).

A checkpoint carries `meta`: the architecture and the shape of every parameter, so a file from
another architecture or network shape is refused with a clear error instead of a half-load."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import torch

from distrl.errors import CheckpointError

FORMAT = 1
_NAME = re.compile(r"^ckpt-(\d{10})\.pt$")


def param_shapes(state_dict: dict[str, torch.Tensor]) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in state_dict.items()}


def checkpoint_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints"


def save_checkpoint(run_dir: Path, step: int, payload: dict[str, Any], meta: dict[str, Any],
                    keep: int = 3) -> Path:
    """Write checkpoints/ckpt-<step>.pt atomically and keep the newest `keep` files."""
    folder = checkpoint_dir(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"ckpt-{step:010d}.pt"
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        torch.save({"meta": {**meta, "format": FORMAT, "step": step}, **payload}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    for old in list_checkpoints(run_dir)[:-keep]:
        old.unlink(missing_ok=True)
    return path


def list_checkpoints(run_dir: Path) -> list[Path]:
    folder = checkpoint_dir(run_dir)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _NAME.match(p.name))


def latest_checkpoint(run_dir: Path) -> Path:
    found = list_checkpoints(run_dir)
    if not found:
        raise CheckpointError(f"no checkpoint in {checkpoint_dir(run_dir)}: nothing to resume; "
                              "start a new run without --resume")
    return found[-1]


def load_checkpoint(path: Path, architecture: str, shapes: dict[str, list[int]]) -> dict[str, Any]:
    """Load and check a checkpoint; never modifies or deletes any file."""
    path = Path(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated, not a zip, not torch, unsafe pickle: all the same to the user
        earlier = [p.name for p in list_checkpoints(path.parent.parent) if p != path]
        hint = f"move it aside to resume from {earlier[-1]}" if earlier else "start a new run"
        raise CheckpointError(f"checkpoint {path} is corrupt or not a distrl checkpoint "
                              f"({type(exc).__name__}); {hint}") from None
    meta = data.get("meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a distrl checkpoint (format {FORMAT}); start a new run")
    if meta.get("architecture") != architecture:
        raise CheckpointError(f"checkpoint {path} is from architecture {meta.get('architecture')!r}, "
                              f"not {architecture!r}: resume it with `distrl train {meta.get('architecture')}`")
    saved = meta.get("shapes", {})
    if saved != shapes:
        diff = sorted(set(saved) ^ set(shapes)) or [k for k in shapes if saved.get(k) != shapes[k]]
        key = diff[0]
        raise CheckpointError(f"checkpoint {path} holds another network shape ({key}: "
                              f"{saved.get(key)} in the file, {shapes.get(key)} in this run); "
                              "resume with the config it was made with")
    return data
