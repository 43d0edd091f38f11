"""Shared by the peer benchmarks: one evaluation protocol, one way to limit cores, one results format.

Every contender runs in its own child process (`run_child`), so Ray instances, torch thread pools,
allocator state and crashes never leak from one contender into the next, and a contender that
cannot run is reported as "failed: <why>" instead of ending the benchmark."""

from __future__ import annotations

import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from bench import results
from bench.machine import machine_info  # noqa: F401 (bench/peers/minatar_peers.py reads it from here)
from bench.runs import RESULTS, ROOT  # RESULTS: bench/results, or BENCH_RESULTS=DIR (e.g. for trial runs)

# Comparison 1's protocol, the same for every library.
EVAL_EVERY_FRAMES = 5_000
EVAL_EPISODES = 10
SOLVED_MEAN = 475.0
EVAL_SEED_OFFSET = 1000

RESULT_PREFIX = "PEER-RESULT "


# ------------------------------------------------------------------ cores and threads

def limit_cores(cores: int) -> list[int]:
    """Pin this process (and every process it starts: Ray's raylet and workers inherit it) to the
    first `cores` CPUs it may use, so each contender gets the same CPUs whatever it spawns."""
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[:max(1, min(cores, len(allowed)))]
    os.sched_setaffinity(0, chosen)
    return chosen


def pin_torch_threads(threads: int) -> None:
    """The same intra-op thread count in every contender's training process (1 for the small
    CartPole MLPs, as distrl does itself; the core count for the Atari CNN learners)."""
    import torch
    torch.set_num_threads(max(1, threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set once in this process


def protect_ray() -> None:
    """Start every local Ray (distrl's and RLlib's alike) with distrl's per-run token, before ray is imported."""
    from distrl.runtime import protect_local_ray
    protect_local_ray("")


# ------------------------------------------------------------------ comparison 1's evaluation

def greedy_returns(act: Callable[[Any], int], seed: int, episodes: int = EVAL_EPISODES) -> list[float]:
    """`episodes` greedy episodes on a fresh CartPole-v1 env reset with seed+1000 once, so every
    evaluation of every library starts from the same sequence of initial states for a given seed."""
    import gymnasium
    import numpy as np
    env = gymnasium.make("CartPole-v1")
    returns = []
    try:
        obs, _ = env.reset(seed=seed + EVAL_SEED_OFFSET)
        for _ in range(episodes):
            total, done = 0.0, False
            while not done:
                obs, reward, terminated, truncated, _ = env.step(int(act(np.asarray(obs, dtype=np.float32))))
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
            obs, _ = env.reset()
    finally:
        env.close()
    return returns


class PeriodicEval:
    """Evaluate the current greedy policy the first time the frame count reaches each multiple of
    5,000, and remember the first evaluation whose mean is >= 475.

    The clock excludes evaluation time: each library pauses its training while it evaluates (SB3
    and RLlib by construction, distrl because its driver waits for the benchmark's hook), so what is reported
    is training time to the snapshot that solved. Start-up (Ray, processes) is included."""

    def __init__(self, seed: int, every: int = EVAL_EVERY_FRAMES, episodes: int = EVAL_EPISODES,
                 threshold: float = SOLVED_MEAN):
        self.seed, self.every, self.episodes, self.threshold = seed, every, episodes, threshold
        self.t0 = time.perf_counter()
        self.ready_s: float | None = None
        self.eval_s = 0.0
        self.next = every
        self.history: list[dict] = []
        self.solved: dict | None = None

    def ready(self) -> None:
        """The library is built and about to train: what came before is its start-up (reported)."""
        if self.ready_s is None:
            self.ready_s = time.perf_counter() - self.t0

    def train_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def due(self, frames: int) -> bool:
        return self.solved is None and frames >= self.next

    def maybe_eval(self, frames: int, snapshot: Callable[[], tuple[Callable[[Any], int], dict]],
                   resume: Callable[[], None] | None = None) -> bool:
        """If `frames` reached the next multiple: `snapshot()` pauses training where the library
        needs it and returns (greedy act, extra fields to record); the policy is evaluated, then
        `resume()`. All of that is left out of the clock. True once solved."""
        if not self.due(frames):
            return self.solved is not None
        wall = self.train_s()
        t = time.perf_counter()
        try:
            act, extra = snapshot()
            returns = greedy_returns(act, self.seed, self.episodes)
        finally:
            if resume is not None:
                resume()
            self.eval_s += time.perf_counter() - t
        mean = sum(returns) / len(returns)
        row = {"frames": int(frames), "wall_s": round(wall, 3), "mean": mean, **extra}
        self.history.append(row)
        while self.next <= frames:
            self.next += self.every
        if mean >= self.threshold and self.solved is None:
            self.solved = row
        return self.solved is not None

    def result(self) -> dict:
        return {"solved": self.solved is not None,
                "frames_to_solve": self.solved["frames"] if self.solved else None,
                "wall_s_to_solve": self.solved["wall_s"] if self.solved else None,
                "evaluations": self.history, "eval_s_excluded": round(self.eval_s, 3),
                "startup_s": None if self.ready_s is None else round(self.ready_s, 1)}


# ------------------------------------------------------------------ results

def command_line() -> str:
    """The command as a reader would type it from the repository root (`python -m bench.peers.<script> ...`)."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    script = ["-m", spec.name] if spec is not None else [sys.argv[0]]
    return shlex.join(["python", *script, *sys.argv[1:]])


def results_path(comparison: str, folder: Path = RESULTS) -> Path:
    """A comparison's results file: bench/results/peers-<comparison>.jsonl (bench/README.md's scheme)."""
    return folder / f"peers-{comparison}.jsonl"


def child_log(comparison: str, contender: str) -> Path:
    """Where a contender's child process's output is kept: logs/peers-<comparison>-<contender>.log in RESULTS."""
    return RESULTS / "logs" / f"peers-{comparison}-{contender}.log"


def sitting_seed(rows: list[dict], settings: dict) -> int | list[int] | None:
    """The header's seed: the rows' one seed, or their seeds in order, or the settings' seed, or None."""
    seeds = sorted({r["seed"] for r in rows if r.get("seed") is not None})
    if not seeds and settings.get("seed") is not None:
        seeds = [settings["seed"]]
    return seeds[0] if len(seeds) == 1 else (seeds or None)


def write_results(comparison: str, rows: list[dict], settings: dict, speed: bool = True) -> Path:
    """Append one sitting to results_path(comparison) (bench/results.py's schema): a header with the command,
    the date, the machine and the speed index (`speed`), then one row per contender, each with this run's
    id and settings (report.py reads the latest run of each file)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = results_path(comparison, RESULTS)
    head = results.header(command_line(), seed=sitting_seed(rows, settings), speed=speed)
    now = datetime.datetime.now(datetime.timezone.utc)
    common = {"comparison": comparison, "run_id": now.strftime("%Y%m%dT%H%M%S%fZ"), "settings": settings}
    with open(path, "a") as f:
        results.write_sitting(f, head, [json.loads(json.dumps({**common, **row}, default=str)) for row in rows])
    return path


def figures(rows: list[dict], *keys: str) -> dict:
    """Each contender's `keys`, for the one-line summary a comparison ends with."""
    return {r["contender"]: {k: r.get(k) for k in keys} for r in rows}


def finish(comparison: str, rows: list[dict], settings: dict, write: bool, summary: dict, speed: bool = True) -> None:
    """A comparison's last step: append its sitting to its results file (unless --no-write; `speed`: measure
    the speed index first, about 10 s), print `summary` as JSON."""
    if write:
        print(f"\nwrote {write_results(comparison, rows, settings, speed)}")
    print(json.dumps(summary, default=str))


# ------------------------------------------------------------------ child processes

def emit(result: dict) -> None:
    """A child's answer: the last line of its stdout that starts with RESULT_PREFIX."""
    sys.stdout.flush()
    print(RESULT_PREFIX + json.dumps(result, default=str), flush=True)


def run_child(module: str, args: list[str], timeout_s: float, log: Path | None = None) -> dict:
    """Run `python -m module args...` from the repository root; its RESULT line, or {"status": "failed:
    ..."} with the reason (the last error line, a timeout, or a missing result)."""
    cmd = [sys.executable, "-m", module, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=str(ROOT))
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        code = None
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {shlex.join(cmd)}\n--- stdout\n{out}\n--- stderr\n{err}\n")
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    if code is None:
        return {"status": f"failed: no result within the {timeout_s:.0f} s limit"}
    import re
    text = re.sub(r"\x1b\[[0-9;]*m", "", err + "\n" + out)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "Error" in ln or "error:" in ln or "Exception" in ln]
    reason = (errors or lines or [f"exit status {code}"])[-1]
    return {"status": f"failed: {reason[:300]}"}


def guarded(fn: Callable[[], dict]) -> None:
    """Child entry: emit fn()'s result, or the exception as a failure, never a traceback alone."""
    try:
        result = fn()
        result.setdefault("status", "ok")
    except Exception as exc:  # a contender that cannot run is reported, not fatal
        import traceback
        traceback.print_exc()
        result = {"status": f"failed: {reason(exc)}"}
    emit(result)


def reason(exc: BaseException) -> str:
    """One line saying why: the last line of the message (a Ray task error ends with its cause),
    without terminal colour codes."""
    import re
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return (last if ":" in last and "Error" in last.split(":")[0] else f"{type(exc).__name__}: {last}")[:300]


def fmt(x: Any, digits: int = 0) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)
