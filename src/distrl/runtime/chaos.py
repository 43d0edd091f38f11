"""Fault injection for the ray runtime: `distrl train ... --runtime ray --chaos SECONDS`.

During a real run it SIGKILLs processes: a random actor every `every_s` seconds, one replay shard
once (at `replay_at` of the frames), and the learner, or one parameter-server shard where the
architecture has no separate learner, once (at `learner_at`, once a checkpoint exists). Ray
restarts each of them; the harness then checks that the restarted stateful part loaded the newest
checkpoint present when it died and holds exactly its state (a digest over every parameter, target,
optimizer slot and counter), and reports everything it did in `report()` (saved as chaos.json).

Kills go to the process id, so this harness drives runs on this machine; it is a driver hook
(the drivers in runtime/ray/ call it on every tick) and knows nothing of the architectures beyond the handles
the drivers expose: actors|workers|bundles, replay, learner, ps."""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from distrl.checkpoint import list_checkpoints, read_checkpoint, state_digest


def _pid(_actor: Any) -> int:
    return os.getpid()


def _gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


ACTOR_ROLES = ("actors", "workers", "bundles")  # the role whose instances are killed as "actor", by architecture


class Chaos:
    def __init__(self, every_s: float, max_frames: int, seed: int = 0, replay_at: float = 0.4,
                 learner_at: float = 0.6):
        self.every_s, self.max_frames = float(every_s), int(max_frames)
        self.replay_at, self.learner_at = replay_at, learner_at
        self.rng = random.Random(seed)
        self.kills: list[dict[str, Any]] = []
        self.restores: list[dict[str, Any]] = []
        self._pids: dict[int, int] = {}  # id(handle) -> pid of its current incarnation
        self._asked: dict[int, Any] = {}  # id(handle) -> pending pid ref
        self._t0: float | None = None
        self._next_actor = 0.0
        self._replay_done = self._learner_done = False
        self._verify: dict[str, Any] | None = None  # a restarted stateful part whose state is still to be checked

    # ---- the hook ----------------------------------------------------------------------------
    def __call__(self, state: dict[str, Any]) -> None:
        now = time.monotonic()
        if self._t0 is None:
            self._t0, self._next_actor = now, now + self.every_s
        actors: list[Any] = next((state[name] for name in ACTOR_ROLES if state.get(name)), [])
        replay = [h for h in state.get("replay", []) if h is not None]
        stateful = list(state.get("learner") or state.get("ps") or [])
        self._ask_pids([*actors, *replay, *stateful])
        frames = state["totals"].get("frames", 0)
        if now >= self._next_actor and self._kill(self._known(actors), "actor", frames):
            self._next_actor = now + self.every_s
        if replay and not self._replay_done and frames >= self.replay_at * self.max_frames:
            self._replay_done = self._kill(self._known(replay), "replay", frames)
        if stateful and not self._learner_done and frames >= self.learner_at * self.max_frames \
                and list_checkpoints(state["run_dir"]):
            kind = "learner" if state.get("learner") else "ps_shard"
            killed = self._kill(self._known(stateful), kind, frames, run_dir=state["run_dir"])
            if killed:
                self._learner_done = True
                self._verify = {**self.kills[-1], "handle": stateful[self.kills[-1]["index"]]}
        if self._verify is not None:
            self._check_restore()

    def _ask_pids(self, handles: list[Any]) -> None:
        for h in handles:
            if id(h) not in self._pids and id(h) not in self._asked:
                self._asked[id(h)] = h.__ray_call__.remote(_pid)
        if not self._asked:
            return
        ready, _ = ray.wait(list(self._asked.values()), num_returns=len(self._asked), timeout=0)
        for key, ref in list(self._asked.items()):
            if ref in ready:
                del self._asked[key]
                try:
                    self._pids[key] = ray.get(ref)
                except RayActorError:
                    pass  # still restarting: asked again next tick

    def _known(self, handles: list[Any]) -> list[tuple[int, Any]]:
        return [(i, h) for i, h in enumerate(handles) if id(h) in self._pids]

    def _kill(self, candidates: list[tuple[int, Any]], kind: str, frames: int, run_dir: Path | None = None) -> bool:
        if not candidates:
            return False
        index, handle = self.rng.choice(candidates)
        pid = self._pids.pop(id(handle))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return False  # died on its own already; Ray is restarting it
        assert self._t0 is not None  # set by the first tick, before any kill
        event: dict[str, Any] = {"kind": kind, "index": index, "pid": pid, "frames": int(frames),
                 "t": round(time.monotonic() - self._t0, 2), "dead": _gone(pid)}
        if run_dir is not None:  # what a restart must load: the newest checkpoint at the moment of death
            found = list_checkpoints(run_dir)
            event["newest_checkpoint"] = str(found[-1]) if found else None
        self.kills.append(event)
        return True

    def _check_restore(self) -> None:
        v = self._verify
        assert v is not None and self._t0 is not None  # only called with a restart to verify, after the first tick
        try:
            info = cast(dict[str, Any], ray.get(v["handle"].restored.remote(), timeout=5))
        except (RayActorError, GetTimeoutError):
            return  # not back yet
        if info.get("awaiting"):
            return  # back, but the driver has not handed it its state yet
        self._verify = None
        result: dict[str, Any] = {"kind": v["kind"], "index": v["index"], "old_pid": v["pid"], "new_pid": info["pid"],
                  "path": info["path"], "expected_path": v["newest_checkpoint"],
                  "seconds_to_restore": round(time.monotonic() - self._t0 - v["t"], 2)}
        if info["path"]:
            data = read_checkpoint(info["path"])
            saved = data["roles"]["learner" if v["kind"] == "learner" else "ps"][v["index"]]
            result["updates"] = int(saved["updates"] if "updates" in saved else saved["version"])
            result["exact"] = state_digest(saved) == info["digest"]
        else:
            result["exact"] = False
        self.restores.append(result)

    # ---- what happened -----------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        return {"every_s": self.every_s, "kills": dict(Counter(k["kind"] for k in self.kills)), "events": self.kills,
                "restores": self.restores, "pending_restore_check": self._verify is not None}
