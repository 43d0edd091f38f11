"""The one place a run's state touches storage: checkpoints written atomically (a temp file, then a rename)
and read with torch.load(weights_only=True), and the replay sets saved with them. Roles never write:
they hand their state to the driver as data, and the driver saves it here and reads it back here
(runtime/driver.py), so a role on a host that shares no disk with the driver loses nothing.

One format for every architecture: `{"meta", "roles", "counters", "returns", "rng"}`, where `roles`
maps each stateful role to the states of its instances (`{"learner": [state]}` for Ape-X,
`{"ps": [shard 0, shard 1, ...]}` for Gorila, A3C and BA3C), `counters` is the run's progress (frames,
episodes, ...), `returns` the recent training returns, and `rng` the torch RNG where a role draws
from it. `meta` names the architecture and the shape of every parameter, so a file from another
architecture or network shape is refused with a clear error instead of a half-load."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from distrl.errors import CheckpointError

FORMAT = 2
_NAME = re.compile(r"^ckpt-(\d{10})\.pt$")
_REPLAY = re.compile(r"^replay-(\d{10})-(\d{2})\.npz$")


def state_digest(state: Any) -> str:
    """SHA-256 over every tensor (dtype, shape, bytes), number and key of a nested state, so two
    states are equal exactly when their digests are: how a restart is checked against its file."""
    h = hashlib.sha256()

    def feed(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu().contiguous()
            h.update(f"T{x.dtype}{tuple(x.shape)}".encode())
            h.update(x.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(x, dict):
            h.update(b"{")
            for k in sorted(x, key=str):
                h.update(repr(k).encode())
                feed(x[k])
            h.update(b"}")
        elif isinstance(x, (list, tuple)):
            h.update(b"[")
            for v in x:
                feed(v)
            h.update(b"]")
        elif hasattr(x, "tobytes") and hasattr(x, "dtype"):  # numpy arrays and scalars
            h.update(f"A{x.dtype}{getattr(x, 'shape', ())}".encode() + x.tobytes())
        else:
            h.update(f"{type(x).__name__}:{x!r}".encode())

    feed(state)
    return h.hexdigest()


def param_shapes(state_dict: dict[str, torch.Tensor]) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in state_dict.items()}


def checkpoint_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints"


def _atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """`write(file)` into a temp file beside `path`, synced, then renamed over it: a reader sees the old
    file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_checkpoint(run_dir: Path, step: int, roles: dict[str, list[Any]], meta: dict[str, Any], *,
                    counters: dict[str, float] | None = None, returns: list[float] | None = None,
                    rng: torch.Tensor | None = None, replay: Mapping[int, Mapping[str, np.ndarray]] | None = None,
                    keep: int = 3) -> Path:
    """Write checkpoints/ckpt-<step>.pt atomically and keep the newest `keep` files (0: every one). `replay`
    (shard index -> its table's arrays) is written first, so a checkpoint that exists has its whole replay set."""
    folder = checkpoint_dir(run_dir)
    for shard, arrays in (replay or {}).items():
        def write(f: IO[bytes], a: Mapping[str, Any] = arrays) -> None:
            np.savez_compressed(f, **a)

        _atomic_write(replay_path(run_dir, step, shard), write)
    path = folder / f"ckpt-{step:010d}.pt"
    payload = {"meta": {**meta, "format": FORMAT, "step": step}, "roles": {k: list(v) for k, v in roles.items()},
               "counters": {k: int(v) for k, v in (counters or {}).items()},
               "returns": [float(r) for r in (returns or [])]}
    if rng is not None:
        payload["rng"] = rng
    _atomic_write(path, lambda f: torch.save(payload, f))
    for old in list_checkpoints(run_dir)[:-keep] if keep else []:
        old.unlink(missing_ok=True)
    for old in folder.iterdir():  # replay copies are big: keep only the newest checkpoint's set
        if (m := _REPLAY.match(old.name)) and int(m.group(1)) < step:
            old.unlink(missing_ok=True)
    return path


def load_replay(path: Path) -> dict[str, np.ndarray]:
    """A replay shard's saved arrays (ReplayTable.from_state rebuilds the table); a missing or damaged file
    raises CheckpointError."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"replay checkpoint {path} not found; check the path or start without --resume")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except Exception as e:  # zip, zlib or npy errors: all mean a damaged file
        raise CheckpointError(f"replay checkpoint {path} is corrupt or truncated ({type(e).__name__}: {e}); "
                              "move it aside and resume from an earlier checkpoint") from e


def replay_items(path: Path) -> int:
    """The transitions a saved replay shard holds, read from its index alone; 0 if it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return int(z["keys"].shape[0])
    except Exception:
        return 0


def replay_path(run_dir: Path, step: int, shard: int) -> Path:
    """Where shard `shard` of the replay is saved with checkpoint `step` (written before the checkpoint,
    so a checkpoint's replay set is complete once the checkpoint exists)."""
    return checkpoint_dir(run_dir) / f"replay-{step:010d}-{shard:02d}.npz"


def checkpoint_step(path: Path) -> int:
    match = _NAME.match(Path(path).name)
    assert match is not None  # a path list_checkpoints found
    return int(match.group(1))


def replay_set(run_dir: Path) -> dict[int, Path]:
    """The replay shards saved with the newest checkpoint, by shard index; {} if it has none."""
    found = list_checkpoints(run_dir)
    if not found:
        return {}
    step = checkpoint_step(found[-1])
    return {int(m.group(2)): p for p in checkpoint_dir(run_dir).iterdir()
            if (m := _REPLAY.match(p.name)) and int(m.group(1)) == step}


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


def named_checkpoint(run_dir: Path, name: str | Path) -> Path:
    """A checkpoint of the run by its file name (ckpt-0000040000.pt) or path; a clear error where it is not one."""
    path = Path(name) if Path(name).is_file() else checkpoint_dir(run_dir) / Path(name).name
    if not path.is_file():
        kept = ", ".join(p.name for p in list_checkpoints(run_dir)) or "none"
        raise CheckpointError(f"no checkpoint {name} in {checkpoint_dir(run_dir)} (it holds: {kept}); give one of "
                              "those, or train with --set keep_checkpoints=0 to keep every one")
    return path


def read_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint file's payload as saved, unchecked (load_checkpoint checks it against a run); never
    modifies or deletes any file."""
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
        raise CheckpointError(f"{path} is not a distrl checkpoint of format {FORMAT}; start a new run")
    return data


def load_checkpoint(path: Path, architecture: str, shapes: dict[str, list[int]]) -> dict[str, Any]:
    """Load a checkpoint and check that it belongs to a run of `architecture` with these network shapes."""
    data = read_checkpoint(path)
    meta = data["meta"]
    if meta.get("architecture") != architecture:
        raise CheckpointError(f"checkpoint {path} is from architecture {meta.get('architecture')!r}, "
                              f"not {architecture!r}: resume it with `distrl train {meta.get('architecture')}`")
    saved = meta.get("shapes", {})
    if saved != shapes:
        diff = sorted(set(saved) ^ set(shapes)) or [k for k in shapes if saved.get(k) != shapes[k]]
        key = diff[0]
        raise CheckpointError(f"checkpoint {path} holds another network shape ({key}: "
                              f"{saved.get(key, 'absent')} in the file, {shapes.get(key, 'absent')} in this run); "
                              "resume with the config it was made with")
    return data
