"""Where a run lives: a local or mounted path, or a URI of a filesystem fsspec knows (s3://, gs://,
...), with credentials from the environment as that filesystem reads them (AWS_* and AWS_ENDPOINT_URL,
GOOGLE_APPLICATION_CREDENTIALS), never from code or config.

A run at a URI is worked on in a local folder, its mirror: the driver writes there as into any run, and
`push()` copies to the URI what changed, after every checkpoint and at the end; a reader `pull()`s the
files it needs. A mirror, not writes through the filesystem, because metrics.csv and TensorBoard's
events grow by appends, which object stores do not have (Ray Train syncs a local folder to its
storage_path for the same reason)."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from distrl.errors import ConfigError

TOP_FILES = ("config.json", "metrics.csv", "evaluations.csv", "eval.json", "summary.json", "chaos.json")
_CHECKPOINT = re.compile(r"^(ckpt|replay)-(\d{10})(-\d{2})?\.(pt|npz)$")


def is_uri(run_dir: str | Path | None) -> bool:
    """Whether `run_dir` names a remote filesystem (scheme://...) rather than a path on this host."""
    text = str(run_dir or "")
    return "://" in text and not text.startswith("file://")


class RunStore:
    """A run directory at `uri`, mirrored in a local folder."""

    def __init__(self, uri: str, local: Path | None = None):
        try:
            import fsspec
            self.fs, self.root = fsspec.core.url_to_fs(uri.rstrip("/"))
        except ImportError as exc:  # fsspec names the package the scheme needs
            raise ConfigError(f"run directory {uri}: {exc}; install it (e.g. pip install 'distrl[s3]' for s3://)") \
                from None
        except ValueError as exc:
            raise ConfigError(f"run directory {uri}: {exc}; give a local path or a URI such as s3://bucket/run") \
                from None
        self.uri = uri.rstrip("/")
        # named as the run is, so what labels a run by its folder's name (plots) reads the same
        self._temporary: Path | None = None
        if local is None:
            self._temporary = Path(tempfile.mkdtemp(prefix="distrl-run-"))
            local = self._temporary / (Path(self.root).name or "run")
        self._owner = os.getpid()  # a forked child inherits the store, not the mirror: it must not delete it
        self.local = Path(local)
        self.local.mkdir(parents=True, exist_ok=True)
        self._sent: dict[str, tuple[int, int]] = {}  # relative path -> (size, mtime_ns) as last pushed or pulled

    def _remote(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def name(self, path: str | Path) -> str:
        """A file of the mirror as the URI names it."""
        return str(path).replace(str(self.local), self.uri, 1)

    def names(self) -> list[str]:
        """The names at the top of the run directory (none if it does not exist yet)."""
        try:
            return sorted(Path(p).name for p in self.fs.ls(self.root, detail=False))
        except FileNotFoundError:
            return []
        except Exception as exc:  # credentials, endpoint, permissions: the filesystem's own words
            raise ConfigError(f"cannot list run directory {self.uri} ({type(exc).__name__}: {exc}); check the "
                              "URI and the credentials in the environment") from None

    def pull(self, checkpoints: bool = True, named: str | None = None) -> Path:
        """The run's top-level files and, with `checkpoints`, its newest checkpoint with that checkpoint's
        replay set, and the checkpoint file `named` where the bucket has it, into the mirror; returns the
        mirror."""
        present = set(self.names())
        wanted = [name for name in TOP_FILES if name in present]
        if named is not None and self.fs.exists(self._remote(f"checkpoints/{named}")):
            wanted.append(f"checkpoints/{named}")
        if checkpoints and "checkpoints" in present:
            saved = sorted(Path(p).name for p in self.fs.ls(self._remote("checkpoints"), detail=False))
            steps = [m.group(2) for n in saved if (m := _CHECKPOINT.match(n)) and m.group(1) == "ckpt"]
            if steps:
                newest = max(steps)
                wanted += [f"checkpoints/{n}" for n in saved if (m := _CHECKPOINT.match(n)) and m.group(2) == newest]
        for relative in wanted:
            if relative in self._sent:
                continue  # pulled before: the mirror is the newer copy
            target = self.local / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            self.fs.get_file(self._remote(relative), str(target))
            self._sent[relative] = self._stamp(target)
        return self.local

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int]:
        st = path.stat()
        return st.st_size, st.st_mtime_ns

    def push(self, keep: int | None = None) -> None:
        """Every file of the mirror that changed since it was last pushed or pulled goes to the URI (a
        checkpoint's replay set before the checkpoint itself, as on a local disk). A training run's push
        gives its `keep` (keep_checkpoints): the URI then keeps that many newest checkpoints, and only the
        newest one's replay set. Any other push (eval, export) removes nothing: its mirror holds only the
        checkpoints it pulled."""
        changed = sorted(self.unsent(), key=lambda p: (p.suffix == ".pt", str(p)))
        for path in changed:
            relative = path.relative_to(self.local).as_posix()
            stamp = self._stamp(path)
            self.fs.put_file(str(path), self._remote(relative))
            self._sent[relative] = stamp
        if keep is not None:
            self._rotate(keep)

    def unsent(self) -> list[Path]:
        """The mirror's files that changed since they were last pushed or pulled."""
        return [p for p in self.local.rglob("*") if p.is_file() and not p.name.startswith(".")
                and self._sent.get(p.relative_to(self.local).as_posix()) != self._stamp(p)]

    def close(self) -> None:
        """Delete the mirror's temporary folder once the URI holds all of it (a mirror holds a run's
        checkpoints and replay: left behind, every run at a URI would fill this host's temp disk). A mirror
        with files the URI lacks (a push that failed) stays, named on stderr, so nothing is lost."""
        if self._temporary is None or os.getpid() != self._owner or not self._temporary.exists():
            return
        left = self.unsent() if self.local.exists() else []
        if left:
            print(f"distrl: {self.local}, the local copy of {self.uri}, holds {len(left)} file(s) the URI lacks "
                  f"({left[0].relative_to(self.local).as_posix()}, ...); copy them there, then delete the folder",
                  file=sys.stderr)
            return
        shutil.rmtree(self._temporary, ignore_errors=True)

    def _rotate(self, keep: int) -> None:
        folder = self.local / "checkpoints"
        kept = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
        steps = [int(m.group(2)) for n in kept if (m := _CHECKPOINT.match(n)) and m.group(1) == "ckpt"]
        if not steps:
            return
        try:
            saved = [Path(p).name for p in self.fs.ls(self._remote("checkpoints"), detail=False)]
        except FileNotFoundError:
            return
        found = [(m, name) for name in saved if (m := _CHECKPOINT.match(name))]
        every = sorted(set(steps) | {int(m.group(2)) for m, _ in found if m.group(1) == "ckpt"})
        retained = set(every[-keep:] if keep else every)
        for m, name in found:
            step = int(m.group(2))
            if (m.group(1) == "ckpt" and step not in retained) or \
                    (m.group(1) == "replay" and name not in kept and step < max(steps)):
                self.fs.rm_file(self._remote(f"checkpoints/{name}"))
                self._sent.pop(f"checkpoints/{name}", None)

    def remove(self, names: tuple[str, ...]) -> None:
        """A distrl run's own files and folders at the URI (--overwrite)."""
        present = set(self.names())
        for name in names:
            if name in present:
                self.fs.rm(self._remote(name), recursive=True)


_STORES: dict[str, RunStore] = {}


def store_for(uri: str) -> RunStore:
    """The one mirror of `uri` in this process: a resume reads it and then trains in it; files pulled once
    are not fetched again."""
    key = str(uri).rstrip("/")
    if key not in _STORES:
        _STORES[key] = RunStore(key)
    return _STORES[key]


@atexit.register
def forget_mirrors() -> None:
    """Let go of every mirror this process holds, deleting those the URI holds whole (at exit too): the next
    read of a URI pulls it anew."""
    for store in _STORES.values():
        store.close()
    _STORES.clear()


def local_run(run_dir: str | Path, checkpoints: bool = True, named: str | None = None) -> Path:
    """Where to read the run `run_dir` on this host: itself, or the mirror of a URI with its top-level files
    (and newest checkpoint, and the checkpoint file `named`) pulled."""
    if not is_uri(run_dir):
        return Path(run_dir)
    return store_for(str(run_dir)).pull(checkpoints=checkpoints, named=named)
