"""BA3C scaling: data points/s of 1, 2, 4 (or more) workers, synchronous against asynchronous.

Run from the repository root: python -m bench.ba3c_scaling [--workers 1,2,4] [--seconds S] [--env ID]
                                  [--gradients-per-call K] [--fraction F] [--quick]

Each row is `distrl train ba3c --runtime ray`'s roles run by its driver (distrl.runtime.ray.run, through
bench/runs.py's run_on_ray): one Ray actor per parameter-server shard, one per worker (GradientWorker,
1 torch thread each) and, in sync mode, the asyncio chief. Presets: ba3c-atari for Atari (the paper's
setting: BA3C CNN with a 128-unit layer, n_sim 10, t_max 5, bs 32, 4 shards running Adam), ba3c-cartpole
for CartPole-v1 (MLP 128, 2 shards). Sync: a round closes once ceil(fraction x workers) workers have
pushed for it (fraction 0.9: every worker up to 9 workers, 15 of 16); async: each gradient goes
straight to the shards (push+pull in one round trip).

The driver keeps every worker busy with calls of K gradients (ray.rounds_per_call). The measured
window opens once the workers have counted the frames of two calls each (Ray's start-up, first pulls
and the chief's first rounds left out) and lasts about --seconds; the figures are the run's metrics.csv
rows over it (a row a second, or every --seconds / 4 when shorter). A data point is one (state, action,
n-step return) in a gradient's batch (bs per gradient, late-dropped gradients included). Updates/s is
the shards' version (the furthest shard's: rounds in sync mode); dropped late/s counts the workers'
gradients the chief refused as late. No evaluator, no checkpoint inside the window (the driver saves
one after the stop). Prints figures and ratios and asserts nothing about times; on a shared machine run
it twice before trusting a difference.
"""

from __future__ import annotations

import argparse
import datetime
import os
import time

from bench.machine import cpu_model, gpu_name, versions
from bench.runs import run_on_ray

NEVER = 10**12  # max_frames and checkpoint_every: the bench's window ends the run, and no checkpoint falls in it


def make_cfg(env: str, workers: int, mode: str, fraction: float, per_call: int, seconds: float):
    """The env's preset on Ray; `per_call` gradients per worker call (0: 3 on Atari, else the preset's)."""
    from distrl import config as C
    from distrl.envs import is_atari
    cfg = C.build_config("ba3c", env, overrides={
        "actors": workers, "sync.mode": mode, "sync.fraction": fraction, "runtime": "ray", "torch_threads": 1,
        "seed": 0, "eval_episodes": 0, "eval_every": 0, "max_frames": NEVER, "checkpoint_every": NEVER,
        "log_every_s": min(1.0, seconds / 4)})
    C.set_value(cfg, "ray.rounds_per_call", per_call or (3 if is_atari(env) else cfg.ray.rounds_per_call))
    return cfg


def measure(env: str, workers: int, mode: str, fraction: float, seconds: float, per_call: int) -> dict:
    """Steady-state rates of `workers` BA3C workers in one sync mode, run by distrl's driver."""
    from distrl.architectures import make_architecture

    cfg = make_cfg(env, workers, mode, fraction, per_call, seconds)
    arch = make_architecture(cfg)
    k = cfg.ray.rounds_per_call
    call_frames = k * cfg.worker.batch_size * arch.frame_skip  # a gradient is bs agent steps
    r = run_on_ray(arch, seconds, warm_frames=2 * workers * call_frames, counted=("dropped_late",))
    return {"data_points": r["data_points_per_s"], "frames": r["env_frames_per_s"],
            "updates_per_s": r["learner_updates_per_s"], "dropped_per_s": r["dropped_late_per_s"], "per_call": k,
            "n_params": arch.n_params, "shards": cfg.ps.shards}


def size_text(nbytes: int) -> str:
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.1f} kB"


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
    protect_local_ray("")  # as distrl.train does, before Ray is imported: a token for the Ray started here
    import ray
    import torch

    from distrl.runtime.ray import connect
    torch.set_num_threads(1)
    connect("", max(worker_counts) + 6)  # one Ray for every row: the workers, 4 shards, the chief, a spare
    began = time.perf_counter()
    try:
        print(f"# BA3C scaling — {datetime.date.today()}, {os.cpu_count()} cores ({cpu_model()}), {gpu_name()}; "
              f"{versions()}")
        print(f"\ndistrl's driver and Ray placement (`--runtime ray`), 1 torch thread per worker, sync.fraction "
              f"{args.fraction:g}, {seconds:g} s per row after warm-up\n")
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
