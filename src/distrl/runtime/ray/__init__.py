"""The ray runtime: each role instance is a Ray actor; Ray starts, places and restarts them.

With no address, `ray.init()` starts a local instance without the dashboard (the embedded default),
its ports guarded by a per-run token (runtime/__init__.py says why not loopback); with `address`
(or RAY_ADDRESS) the same run joins a cluster. placement.py is the placement runtime/driver.py runs
every architecture on: their roles (distrl.components) run unchanged in Ray actors, reached through
RayTransport. Ray restarts every role instance (max_restarts=-1); what each architecture does when one
of its roles restarts is in its module's docstring (distrl.architectures)."""

from distrl.runtime.ray.cluster import connect
from distrl.runtime.ray.placement import check_this_machine, run

__all__ = ["check_this_machine", "connect", "run"]
