"""BA3C scaling: data points/s of 1, 2, 4 (or more) workers, synchronous against asynchronous.

Run: python bench/ba3c_scaling.py [--workers 1,2,4] [--seconds S] [--env ID] [--gradients-per-call K]
                                  [--fraction F] [--quick]

Actors are placed as `distrl train ba3c --runtime ray` places them (runtime/driver.py start_roles, Ray):
one Ray actor per parameter-server shard, one per worker (GradientWorker, 1 torch thread each)
and, in sync mode, the asyncio chief. Presets: ba3c-atari for Atari (the paper's setting: BA3C CNN
with a 128-unit layer, n_sim 10, t_max 5, bs 32, 4 shards running Adam), ba3c-cartpole for
CartPole-v1 (MLP 128, 2 shards). Sync: a round closes once ceil(fraction x workers) workers have
pushed for it (fraction 0.9: every worker up to 9 workers, 15 of 16); async: each gradient goes
straight to the shards (push+pull in one round trip).

The driver keeps every worker busy with `run(K)` calls (K gradients each). One concurrent call per
worker is warm-up and not counted (in sync mode the workers can only progress together). The
measured window runs from the dispatch of the next calls until the first call that returns after
--seconds; calls that returned by then are counted, and a worker's rate is what its counted calls
did over the time from the window's start to its last counted return; the table sums the workers'
rates. A data point is one (state, action, n-step return) in a gradient's batch (bs per gradient,
late-dropped gradients included). Updates/s is the shards' version delta over the window (= rounds
in sync mode); dropped late/s comes from the chief's counters. No evaluator, no checkpoints.
Prints figures and ratios and asserts nothing about times; on a shared machine run it twice before
trusting a difference.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def make_cfg(env: str, workers: int, mode: str, fraction: float, run_dir: str):
    from distrl import config as C
    return C.build_config("ba3c", env, overrides={
        "actors": workers, "sync.mode": mode, "sync.fraction": fraction, "runtime": "ray", "run_dir": run_dir,
        "torch_threads": 1, "seed": 0, "eval_episodes": 0, "eval_every": 0})


def measure(env: str, workers: int, mode: str, fraction: float, seconds: float, per_call: int) -> dict:
    """Steady-state rates of `workers` BA3C worker actors in one sync mode."""
    import ray

    from distrl.architectures.ba3c import BA3C
    from distrl.params.param_server import ShardedParameterServer
    from distrl.runtime.driver import start_roles
    from distrl.runtime.ray.cluster import call
    from distrl.runtime.ray.placement import RayPlacement

    keys = ("data_points", "frames", "gradients")
    with tempfile.TemporaryDirectory() as run_dir:
        arch = BA3C(make_cfg(env, workers, mode, fraction, run_dir))
        k = per_call or (3 if arch.atari else arch.cfg.ray.rounds_per_call)
        started = start_roles(arch, RayPlacement(), [r for r in arch.roles() if r.name != "evaluator"])
        shards, handles, chief = started["ps"], started["workers"], (started["chief"] or [None])[0]
        pending: dict = {}
        try:
            ps = ShardedParameterServer(shards, call, ray.get, sizes=arch.shard_sizes())
            ray.get([h.run.remote(k) for h in handles])  # warm-up: start-up, first pulls, the chief's first rounds
            report = (lambda: ray.get(chief.stats.remote())) if chief is not None else (lambda: {"dropped_late": 0})
            updates0, dropped0 = ps.updates(), report()["dropped_late"]
            sums = [dict.fromkeys(keys, 0.0) for _ in handles]
            busy = [0.0] * workers
            start = time.perf_counter()
            pending = {h.run.remote(k): i for i, h in enumerate(handles)}
            while True:
                ready, _ = ray.wait(list(pending), num_returns=1)
                i = pending.pop(ready[0])
                out = ray.get(ready[0]).counters
                now = time.perf_counter() - start
                for key in keys:
                    sums[i][key] += out[key]
                busy[i] = now
                if now >= seconds:  # window closed: the others' calls still out are not counted
                    break
                pending[handles[i].run.remote(k)] = i
            window = time.perf_counter() - start
            updates, dropped = ps.updates() - updates0, report()["dropped_late"] - dropped0
        finally:
            if chief is not None:
                ray.get(chief.release.remote())  # the workers still out would wait for pushes that never come
            _, stuck = ray.wait(list(pending), num_returns=len(pending), timeout=120)
            if stuck:
                print(f"warning: {len(stuck)} worker call(s) still out 120 s after the window", file=sys.stderr)
            RayPlacement.stop([h for hs in started.values() for h in hs])
    idle = [i for i in range(workers) if busy[i] == 0]
    if idle:
        print(f"warning: worker(s) {idle} returned no call in the window: raise --seconds", file=sys.stderr)
    rate = {key: sum(s[key] / b for s, b in zip(sums, busy) if b > 0) for key in keys}
    return {**rate, "updates_per_s": updates / window, "dropped_per_s": dropped / window, "per_call": k,
            "n_params": arch.n_params, "shards": arch.cfg.ps.shards}


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def size_text(nbytes: int) -> str:
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.1f} kB"


def versions() -> str:
    import ale_py
    import gymnasium
    import ray
    import torch
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (f"{gpu}; Python {platform.python_version()}, torch {torch.__version__}, gymnasium "
            f"{gymnasium.__version__}, ale-py {ale_py.__version__}, ray {ray.__version__}, numpy {np.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4", help="worker counts (1,2,4,8,16 on a 16-core machine)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per row (after warm-up)")
    parser.add_argument("--env", default="ALE/Pong-v5", help="ALE/Pong-v5 (ba3c-atari) or CartPole-v1 (ba3c-cartpole)")
    parser.add_argument("--gradients-per-call", type=int, default=0,
                        help="gradients per worker call (0: 3 on Atari, the preset's ray.rounds_per_call otherwise)")
    parser.add_argument("--fraction", type=float, default=0.9, help="sync.fraction: share of workers closing a round")
    parser.add_argument("--quick", action="store_true", help="smoke test: CartPole-v1, 1 and 2 workers, 3 s per row")
    args = parser.parse_args()
    env = "CartPole-v1" if args.quick else args.env
    worker_counts = [1, 2] if args.quick else [int(x) for x in args.workers.split(",")]
    seconds = 3.0 if args.quick else args.seconds

    from distrl.runtime import protect_local_ray
    protect_local_ray("")
    import ray
    import torch
    torch.set_num_threads(1)
    ray.init(num_cpus=max(worker_counts) + 6, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False)  # workers print the ALE banner; errors still reach ray.get
    began = time.perf_counter()
    try:
        print(f"# BA3C scaling — {datetime.date.today()}, {os.cpu_count()} cores ({cpu_model()}), {versions()}")
        print(f"\nRay actors as `--runtime ray` places them, 1 torch thread per worker, sync.fraction "
              f"{args.fraction:g}, {seconds:g} s per row after a warm-up call\n")
        print("| env | workers | mode | data points/s | data points/s per worker | env frames/s "
              f"| updates/s (rounds in sync) | dropped late/s | scaling vs {worker_counts[0]} worker{'s' if worker_counts[0] > 1 else ''} "
              "| sync / async |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        base: dict[str, float] = {}
        for n in worker_counts:
            rows = {mode: measure(env, n, mode, args.fraction, seconds, args.gradients_per_call)
                    for mode in ("sync", "async")}
            for mode, r in rows.items():
                base.setdefault(mode, r["data_points"])
                ratio = f"{r['data_points'] / rows['async']['data_points']:.2f}" if mode == "sync" else "—"
                print(f"| {env} | {n} | {mode} | {r['data_points']:,.0f} | {r['data_points'] / n:,.0f} "
                      f"| {r['frames']:,.0f} | {r['updates_per_s']:,.1f} "
                      f"| {r['dropped_per_s']:.2f} | {r['data_points'] / base[mode]:.2f} | {ratio} |", flush=True)
        print(f"\n{env}: {r['n_params']:,} parameters ({size_text(r['n_params'] * 4)}), {r['shards']} shards, "
              f"{r['per_call']} gradients per call; total {time.perf_counter() - began:.0f} s")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
