"""Gorila throughput: the sharded parameter server's pushes and pulls, and the env frames/s of N bundles.

Run from the repository root: python -m bench.gorila_throughput [--seconds S] [--shards 1,2,4] [--bundles 1,2,4]
     [--env ID] [--quick]

Part 1, the parameter server, with the Nature CNN Q-network for Pong (6 actions, no dueling head:
Gorila's network), its flat vector split into N shards running AdaGrad:
  in-process  ShardedParameterServer over N local ParamShards (no transport): the cost of AdaGrad
              and of copying the vector, the ceiling for a given shard count.
  ray         one Ray actor per shard, as `distrl train gorila --runtime ray` places them; a
              client pushes a full gradient (waiting for every shard) or pulls the full vector.
  ray/in-process is the share of the in-process rate that Ray's transport keeps.

Part 2, bundles: `distrl train gorila --runtime ray` with N bundles (actor + local replay +
learner each) and 2 shards on the env's preset (gorila-cartpole for CartPole-v1), learning on;
env frames/s and global updates/s in steady state (from the first metrics row with updates to the
last), and the push/pull round trips per second they imply.

Prints figures only and asserts nothing about times; the machine is shared, so run it twice
before trusting a difference.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.machine import versions


def nature_cnn_size() -> int:
    from distrl.nets import make_q_network
    return sum(p.numel() for p in make_q_network((4, 84, 84), 6, dueling=False).parameters())


def rate(fn, seconds: float) -> float:
    fn()  # warm-up (first calls allocate, Ray resolves the actor)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - start)


def ps_rates(n_params: int, shards: int, seconds: float) -> dict:
    import ray

    from distrl.params.param_server import ParamShard, ShardedParameterServer, local_shards
    from distrl.runtime.ray.cluster import call

    values = np.random.default_rng(0).normal(size=n_params).astype(np.float32) * 0.01
    grad = np.full(n_params, 1e-3, np.float32)
    local = ShardedParameterServer(local_shards(values, shards, optimizer="adagrad"))
    versions = [0] * shards
    out = {"shards": shards,
           "local_push": rate(lambda: local.push(grad, local.pull()[1]), seconds / 3),
           "local_pull": rate(local.pull, seconds / 3)}
    sizes = [s.size() for s in local.shards]
    actors = [ray.remote(ParamShard).options(num_cpus=0).remote(values[sl], optimizer="adagrad")
              for sl in local.slices]
    remote = ShardedParameterServer(actors, call, ray.get, sizes=sizes)
    out["ray_push"] = rate(lambda: remote.push(grad, versions), seconds / 3)
    out["ray_pull"] = rate(remote.pull, seconds / 3)
    out["ray_push_pull"] = rate(lambda: remote.push_pull(grad, versions), seconds / 3)
    for a in actors:
        ray.kill(a)
    return out


def bundle_rates(env: str, bundles: int, frames: int) -> dict:
    from distrl import config as C
    from distrl.training import train

    with tempfile.TemporaryDirectory() as tmp:
        cfg = C.build_config("gorila", env, overrides={
            "runtime": "ray", "actors": bundles, "max_frames": frames, "seed": 0, "eval_episodes": 0,
            "log_every_s": 1.0, "run_dir": str(Path(tmp) / "run")})
        if env != "CartPole-v1":  # Atari: small replay start and batch so a CPU machine gets going
            for key, value in {"replay.min_size": 1000, "replay.capacity": 50_000, "ps.shards": 2}.items():
                C.set_value(cfg, key, value)
        summary = train(cfg, live=False)
        rows = [{k: float(v) for k, v in r.items() if v not in ("", "nan")}
                for r in csv.DictReader(open(Path(tmp) / "run" / "metrics.csv"))]
    learning = [r for r in rows if r.get("updates", 0) > 0]
    first, last = (learning[0], learning[-1]) if len(learning) >= 2 else (rows[0], rows[-1])
    dt = max(last["wall_s"] - first["wall_s"], 1e-9)
    return {"bundles": bundles, "frames_per_s": (last["frames"] - first["frames"]) / dt,
            "updates_per_s": (last["updates"] - first["updates"]) / dt, "wall_s": summary["wall_s"],
            "dropped_outliers": last.get("dropped_outliers", 0), "dropped_stale": last.get("dropped_stale", 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per parameter-server measurement")
    parser.add_argument("--shards", default="1,2,4")
    parser.add_argument("--bundles", default="1,2,4")
    parser.add_argument("--env", default="CartPole-v1", help="env for the bundle runs (default CartPole-v1)")
    parser.add_argument("--frames-per-bundle", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 shard, 1 bundle, short budgets")
    args = parser.parse_args()
    shard_counts = [1] if args.quick else [int(x) for x in args.shards.split(",")]
    bundle_counts = [1] if args.quick else [int(x) for x in args.bundles.split(",")]
    seconds = 1.0 if args.quick else args.seconds
    per_bundle = 1500 if args.quick else args.frames_per_bundle

    from distrl.runtime import protect_local_ray
    protect_local_ray("")  # as distrl.train does, before Ray is imported: a token for the Ray started here
    import ray
    import torch

    from distrl.runtime.ray import connect
    torch.set_num_threads(1)
    connect("", max(8, max(bundle_counts) + 2))  # one Ray for both parts; the bundle runs join it
    n = nature_cnn_size()
    print(f"# Gorila throughput — {datetime.date.today()}, {os.cpu_count()} cores, {versions()}")
    print(f"\nParameter server, Nature CNN for Pong ({n:,} parameters, {n * 4 / 1e6:.1f} MB), AdaGrad, "
          f"{seconds:g} s per figure\n")
    print("| shards | in-process pushes/s | in-process pulls/s | ray pushes/s | ray pulls/s | ray push+pull/s "
          "| ray/in-process push | ray/in-process pull |")
    print("|---|---|---|---|---|---|---|---|")
    for k in shard_counts:
        r = ps_rates(n, k, seconds)
        print(f"| {k} | {r['local_push']:.1f} | {r['local_pull']:.1f} | {r['ray_push']:.1f} | {r['ray_pull']:.1f} "
              f"| {r['ray_push_pull']:.1f} | {r['ray_push'] / r['local_push']:.2f} "
              f"| {r['ray_pull'] / r['local_pull']:.2f} |", flush=True)
    print(f"\nBundles on {args.env} (ray runtime, 2 shards, preset values, learning on), "
          f"{per_bundle} frames per bundle\n")
    print("| bundles | env frames/s | global updates/s | frames/s per bundle | run wall s | dropped outliers "
          "| dropped stale |")
    print("|---|---|---|---|---|---|---|")
    for b in bundle_counts:
        r = bundle_rates(args.env, b, per_bundle * b)
        print(f"| {b} | {r['frames_per_s']:.0f} | {r['updates_per_s']:.0f} | {r['frames_per_s'] / b:.0f} "
              f"| {r['wall_s']:.0f} | {r['dropped_outliers']:.0f} | {r['dropped_stale']:.0f} |", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
