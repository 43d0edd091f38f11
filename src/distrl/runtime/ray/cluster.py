"""Joining or starting Ray, and the small calls every Ray driver and host makes through it."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import warnings
from typing import Any

import ray

from distrl.errors import ConfigError

# Ray hands out read-only zero-copy arrays; distrl only reads them (load_state_dict and the loss copy).
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")


RESTART = {"max_restarts": -1, "max_task_retries": 0}


def connect(address: str, num_cpus: int) -> bool:
    """Join `address` (or RAY_ADDRESS), or start a local Ray. True if we started it."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS", "")
    common: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": True}
    on_sigterm = signal.getsignal(signal.SIGTERM)
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, **common)
        except Exception as exc:  # ConnectionError, TimeoutError, ValueError, RuntimeError by version
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"cannot join the Ray cluster at {address!r} ({first[:160]}): check the address "
                              "that `ray start --head` printed, or drop --address to run on this machine") from None
        if os.environ.get("RAY_AUTH_MODE") != "token":
            print(f"distrl: warning: joined the Ray cluster at {address} without token authentication: anyone who "
                  "reaches its ports can run code on its hosts; start it with RAY_AUTH_MODE=token and a "
                  "RAY_AUTH_TOKEN (README, 'A cluster of machines')", file=sys.stderr)
    else:
        ray.init(num_cpus=max(os.cpu_count() or 1, num_cpus), **common)
    # Ray's core worker installs a SIGTERM handler that ends the process on the spot; keep the CLI's,
    # which stops the run as Ctrl-C does (a checkpoint where it stopped).
    if on_sigterm is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    return True


def check_reachable(address: str) -> None:
    """Fail fast on a host:port nobody listens on; ray.init itself retries for minutes."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local" and the like: leave them to Ray
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address!r} ({exc.strerror or exc}): check the "
                          "address that `ray start --head` printed, or drop --address to run on this machine") \
            from None


def call(handle: Any, method: str, *args: Any) -> Any:
    return getattr(handle, method).remote(*args)
