"""A3C throughput: env frames/s and updates/s of 1 and 2 actor-learners, SharedMemoryParams against
the sharded parameter server, on CartPole-v1 and Pong.

Run from the repository root: python -m bench.a3c_throughput [--seconds S] [--workers 1,2] [--shards 1,2]
                                  [--envs CartPole-v1,ALE/Pong-v5] [--quick]

Each row is `distrl train a3c --runtime ray`'s roles run by its driver (distrl.runtime.ray.run, through
bench/runs.py's run_on_ray): one Ray actor per worker (ActorLearnerWorker, algo a3c, one torch thread
each), attached by name to a SharedMemoryParams that the driver owns (`ps.store=shared`), or talking to
one Ray actor per shard (ShardWorker, `ps.store=sharded`), so the sharded figures include Ray's transport
of every push+pull. Presets: a3c-cartpole for CartPole-v1 (MLP 128), a3c-atari for Pong (the A3C CNN;
frame skip 4, so env frames = agent steps x 4, as the workers count them).

The driver keeps every worker busy with calls of the preset's ray.steps_per_call agent steps. The
measured window opens once the workers have counted the frames of two calls each (Ray's start-up and
the first calls left out) and lasts about --seconds; the figures are the run's metrics.csv rows over it
(a row a second, or every --seconds / 4 when shorter): env frames/s, and updates/s = the workers'
pushes/s (one per rollout). No evaluator and no checkpoint inside the window (the driver saves one after
the stop). Prints figures and ratios (sharded / shared for the same env and worker count) and asserts
nothing about times; on a shared machine run it twice before trusting a difference.
"""

from __future__ import annotations

import argparse
import datetime
import os

from bench.machine import versions
from bench.runs import run_on_ray

NEVER = 10**12  # max_frames and checkpoint_every: the bench's window ends the run, and no checkpoint falls in it


def make_cfg(env: str, workers: int, store: str, shards: int, seconds: float):
    from distrl import config as C
    overrides = {"runtime": "ray", "actors": workers, "torch_threads": 1, "seed": 0, "eval_episodes": 0,
                 "ps.store": store, "ps.shards": shards, "max_frames": NEVER, "checkpoint_every": NEVER,
                 "log_every_s": min(1.0, seconds / 4)}
    return C.build_config("a3c", env, overrides=overrides)


def measure(env: str, workers: int, store: str, shards: int, seconds: float) -> dict:
    """Steady-state rates of `workers` actor-learners on one parameter store, run by distrl's driver."""
    from distrl.architectures import make_architecture

    cfg = make_cfg(env, workers, store, shards, seconds)
    arch = make_architecture(cfg)
    steps = cfg.ray.steps_per_call
    r = run_on_ray(arch, seconds, warm_frames=2 * workers * steps * arch.frame_skip)
    return {"frames_per_s": r["env_frames_per_s"], "updates_per_s": r["grad_pushes_per_s"],
            "n_params": arch.n_params, "steps_per_call": steps}


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
    protect_local_ray("")  # as distrl.train does, before Ray is imported: a token for the Ray started here
    import ray
    import torch

    from distrl.runtime.ray import connect
    torch.set_num_threads(1)
    connect("", max(8, max(worker_counts) + max(shard_counts)))  # one Ray for every row; each role a CPU
    try:
        print(f"# A3C throughput — {datetime.date.today()}, {os.cpu_count()} cores, {versions()}")
        print(f"\ndistrl's driver and Ray placement (`--runtime ray`), algo a3c, 1 torch thread per worker, "
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
