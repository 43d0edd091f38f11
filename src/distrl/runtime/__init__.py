"""Runtimes place components: `inline` (one process) and `ray` (one Ray actor per component)."""

from __future__ import annotations

import os
import secrets
import sys


def protect_local_ray(address: str) -> bool:
    """Turn on Ray's token authentication for a Ray that this run will start itself.

    Ray 2.60's servers listen on every interface and map a loopback node address to the machine's
    own IP, so loopback-only is not on offer; a random per-run token makes those ports refuse anyone
    else. Ray reads the mode when it is imported, so this must run first; a run that joins a
    cluster (address or RAY_ADDRESS) or a process that already imported Ray is left as it is."""
    if address or os.environ.get("RAY_ADDRESS") or "RAY_AUTH_MODE" in os.environ or "ray" in sys.modules:
        return False
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return True
