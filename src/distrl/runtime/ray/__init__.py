"""The ray runtime: each role instance is a Ray actor; Ray starts, places and restarts them.

With no address, `ray.init()` starts a local instance without the dashboard (the embedded default),
its ports guarded by a per-run token (runtime/__init__.py says why not loopback); with `address`
(or RAY_ADDRESS) the same run joins a cluster. placement.py is the placement runtime/driver.py runs
Ape-X, Ape-X DPG and Gorila on: their roles (distrl.components.workers) run unchanged in Ray actors,
reached through RayTransport. A3C and BA3C still have a driver each (a3c.py, ba3c.py) over the hosts
in hosts.py, until they are ported to roles.

Faults: Ray restarts every role instance (max_restarts=-1). A dead actor loses only its unsent
transitions; a restarted replay shard comes back empty (or with its saved set) and the learner pauses
until it can sample again; a restarted learner resumes from the run's newest checkpoint."""

from distrl.runtime.ray.a3c import run_a3c
from distrl.runtime.ray.apex import run_apex, run_apex_dpg
from distrl.runtime.ray.ba3c import run_ba3c
from distrl.runtime.ray.cluster import connect
from distrl.runtime.ray.gorila import run_gorila

__all__ = ["connect", "run_apex", "run_apex_dpg", "run_gorila", "run_a3c", "run_ba3c"]
