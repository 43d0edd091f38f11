"""The ray runtime: each component is a Ray actor; Ray starts, places and restarts them.

With no address, `ray.init()` starts a local instance without the dashboard (the embedded default),
its ports guarded by a per-run token (runtime/__init__.py says why not loopback); with `address`
(or RAY_ADDRESS) the same run joins a cluster. Components are the plain classes of
distrl.components, distrl.params and distrl.replay; this package only wraps them (hosts.py) and
moves data between them: experience goes actor -> replay shards in batches, parameters go
learner -> object store -> actors (one put, many gets), priorities go learner -> replay without
waiting. One driver per architecture: apex.py (and Ape-X DPG), gorila.py, a3c.py, ba3c.py.

Faults: actors, replay shards and the learner are restarted by Ray (max_restarts=-1). A dead actor
loses only its unsent transitions; a restarted replay shard comes back empty and the learner pauses
until the table holds `replay.min_size` again; a restarted learner resumes from its latest checkpoint."""

from distrl.runtime.ray.a3c import run_a3c
from distrl.runtime.ray.apex import run_apex, run_apex_dpg
from distrl.runtime.ray.ba3c import run_ba3c
from distrl.runtime.ray.cluster import connect
from distrl.runtime.ray.gorila import run_gorila

__all__ = ["connect", "run_apex", "run_apex_dpg", "run_gorila", "run_a3c", "run_ba3c"]
