"""The inline runtime: every component in this process, stepped in turn. Deterministic for a
seed, so it is what tests and debugging use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.architectures.base import Role
from distrl.components.monitor import Monitor
from distrl.runtime.calls import inline_call
from distrl.runtime.driver import drive
from distrl.transport import InProcess


class InlinePlacement:
    """Every role an object in this process, every call made at once (distrl.transport.InProcess)."""

    name = "inline"
    transport = InProcess
    call_size = staticmethod(inline_call)

    @staticmethod
    def check(roles: list[Role], cfg: Any = None) -> None:
        """Nothing to check in one process."""

    @staticmethod
    def start(role: Role, index: int, links: dict[str, list[Any]]) -> Any:
        return role.cls(role.parts, index, links, InProcess)

    @staticmethod
    def restarts(handles: list[Any]) -> None:
        return None  # nothing restarts in one process: an error ends the run

    @staticmethod
    def stop(handles: list[Any]) -> None:
        """Objects go with the driver."""


def run(builder: Any, run_dir: Path, monitor: Monitor, resume: bool = False,
        hook: Callable[[dict[str, Any]], None] | None = None,
        saved: Callable[[], None] | None = None) -> dict[str, Any]:
    """Any architecture (its builder) in this process. A round is one call of every called role in turn:
    each actor's steps then the learner's updates (Ape-X), each bundle's round (Gorila), each worker's
    rollout (A3C) or gradient (BA3C), the paper's processes serialised. `resume` needs nothing here: the driver hands the
    stateful roles the run's newest checkpoint."""
    return drive(builder.cfg, builder.topology(), InlinePlacement(), run_dir, monitor, hook, saved)
