"""A3C throughput: env frames/s and updates/s of 1 and 2 actor-learners, SharedMemoryParams against
the sharded parameter server, on CartPole-v1 and Pong.

Run: python bench/a3c_throughput.py [--seconds S] [--workers 1,2] [--shards 1,2]
                                    [--envs CartPole-v1,ALE/Pong-v5] [--quick]

Workers are placed as `distrl train a3c --runtime ray` places them: one Ray actor per worker
(distrl.components.workers.ActorLearnerWorker, algo a3c, one torch thread each), attached by name to a
SharedMemoryParams that the driver owns (`ps.store=shared`), or talking to one Ray actor per
shard (distrl.components.workers.ShardWorker, `ps.store=sharded`), so the sharded figures include
Ray's transport of every push+pull. Presets: a3c-cartpole for CartPole-v1 (MLP 128), a3c-atari for
Pong (the A3C CNN; frame skip 4, so env frames = agent steps x 4, as the workers count them).

The driver keeps every worker busy with `run(steps_per_call, 0)` calls (the preset's
ray.steps_per_call, as the runtime does) for --seconds. The first call of each worker is
warm-up and not counted; a worker's rate is the frames and pushes (= updates) of its later calls
over the time from their dispatch to the last one's return, and the table sums the workers' rates.
No evaluator, no checkpoints, no monitor. Prints figures and ratios (sharded / shared for the same
env and worker count) and asserts nothing about times; on a shared machine run it twice before
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


def make_cfg(env: str, workers: int, store: str, shards: int):
    from distrl import config as C
    overrides = {"actors": workers, "torch_threads": 1, "seed": 0, "eval_episodes": 0,
                 "ps.store": store, "ps.shards": shards}
    return C.build_config("a3c", env, overrides=overrides)


def measure(env: str, workers: int, store: str, shards: int, seconds: float) -> dict:
    """Steady-state rates of `workers` Ray actor-learners on one parameter store."""
    import ray

    from distrl.architectures.a3c import A3C
    from distrl.components.workers import ActorLearnerWorker, ShardWorker
    from distrl.runtime.ray.placement import RayTransport

    cfg = make_cfg(env, workers, store, shards)
    arch, steps = A3C(cfg), cfg.ray.steps_per_call
    handles, shard_handles = [], []
    try:
        with tempfile.TemporaryDirectory() as run_dir, arch.owned():
            cfg.run_dir = run_dir
            if store == "sharded":
                shard_cls = ray.remote(ShardWorker).options(num_cpus=1)
                shard_handles = [shard_cls.remote(arch, i, {}, RayTransport) for i in range(shards)]
            worker_cls = ray.remote(ActorLearnerWorker).options(num_cpus=1)
            handles = [worker_cls.remote(arch, i, {"ps": shard_handles}, RayTransport) for i in range(workers)]
            ray.get([h.run.remote(steps, 0) for h in handles])  # warm-up: start-up, first pulls, first calls
            frames, updates, busy = [0.0] * workers, [0.0] * workers, [0.0] * workers
            start = time.perf_counter()
            pending = {h.run.remote(steps, 0): i for i, h in enumerate(handles)}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                i = pending.pop(ready[0])
                out = ray.get(ready[0]).counters
                frames[i] += out["frames"]
                updates[i] += out["updates"]
                busy[i] = time.perf_counter() - start  # this worker's last return
                if time.perf_counter() - start < seconds:
                    pending[handles[i].run.remote(steps, 0)] = i
    finally:
        for h in [*handles, *shard_handles]:
            ray.kill(h)
    return {"frames_per_s": sum(f / b for f, b in zip(frames, busy)),
            "updates_per_s": sum(u / b for u, b in zip(updates, busy)),
            "n_params": arch.n_params, "steps_per_call": steps}


def versions() -> str:
    import ale_py
    import gymnasium
    import ray
    import torch
    return (f"Python {platform.python_version()}, torch {torch.__version__}, gymnasium {gymnasium.__version__}, "
            f"ale-py {ale_py.__version__}, ray {ray.__version__}, numpy {np.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per row (after warm-up)")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--shards", default="1,2", help="shard counts for the sharded store")
    parser.add_argument("--envs", default="CartPole-v1,ALE/Pong-v5")
    parser.add_argument("--quick", action="store_true", help="smoke test: CartPole only, 1 shard, 1 s per row")
    args = parser.parse_args()
    envs = ["CartPole-v1"] if args.quick else args.envs.split(",")
    worker_counts = [int(x) for x in args.workers.split(",")]
    shard_counts = [1] if args.quick else [int(x) for x in args.shards.split(",")]
    seconds = 1.0 if args.quick else args.seconds

    from distrl.runtime import protect_local_ray
    protect_local_ray("")
    import ray
    import torch
    torch.set_num_threads(1)
    ray.init(num_cpus=max(os.cpu_count() or 1, 8), include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False)  # workers print the ALE banner; errors still reach ray.get
    try:
        print(f"# A3C throughput — {datetime.date.today()}, {os.cpu_count()} cores, {versions()}")
        print(f"\nRay actors as `--runtime ray` places them, algo a3c, 1 torch thread per worker, "
              f"{seconds:g} s per row after warm-up; frames are env (emulator) frames\n")
        print("| env | workers | store | env frames/s | updates/s | frames/s per worker "
              "| sharded / shared, frames/s | sharded / shared, updates/s |")
        print("|---|---|---|---|---|---|---|---|")
        info = []
        for env in envs:
            for w in worker_counts:
                base = measure(env, w, "shared", 1, seconds)
                print(f"| {env} | {w} | shared memory | {base['frames_per_s']:,.0f} | {base['updates_per_s']:,.0f} "
                      f"| {base['frames_per_s'] / w:,.0f} | 1.00 | 1.00 |", flush=True)
                for k in shard_counts:
                    r = measure(env, w, "sharded", k, seconds)
                    print(f"| {env} | {w} | sharded, {k} shard{'s' if k > 1 else ''} | {r['frames_per_s']:,.0f} "
                          f"| {r['updates_per_s']:,.0f} | {r['frames_per_s'] / w:,.0f} "
                          f"| {r['frames_per_s'] / base['frames_per_s']:.2f} "
                          f"| {r['updates_per_s'] / base['updates_per_s']:.2f} |", flush=True)
            info.append(f"{env}: {base['n_params']:,} parameters ({base['n_params'] * 4 / 1e6:.2f} MB), "
                        f"{base['steps_per_call']} agent steps per call")
        print("\n" + "\n".join(info))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
