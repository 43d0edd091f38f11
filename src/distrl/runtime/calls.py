"""How much one call of a called role asks, on each placement: the architecture says what its role's
calls count (Role.work) and, where the roles take turns in one process, how many make a round; where each
role has a process of its own, the size is the Ray section's `<unit>_per_call` (enough work to amortise a
round trip). Here, not in the architectures, so that no architecture or component reads a placement's
config."""

from __future__ import annotations

from typing import Any, cast

from distrl.architectures.base import Work
from distrl.errors import ConfigError


def inline_call(work: Work, cfg: Any) -> float:
    """A round's share: the architecture's own, else inline.actor_steps (a replay-fed actor's steps)."""
    if work.round is not None:
        return work.round
    return _size(cfg, "inline", "actor_steps", work)


def ray_call(work: Work, cfg: Any) -> float:
    """ray.<unit>_per_call: steps_per_call, updates_per_call, rounds_per_call."""
    return _size(cfg, "ray", f"{work.unit}_per_call", work)


def _size(cfg: Any, section: str, key: str, work: Work) -> float:
    value = getattr(getattr(cfg, section, None), key, None)
    if value is None:
        raise ConfigError(f"{cfg.architecture} has a role whose calls count {work.unit}, but its config has no "
                          f"{section}.{key}: add that key to its {section} section")
    return cast(float, value)
