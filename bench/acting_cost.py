"""Where an Ape-X actor's time goes on Atari (issue 34), on one core: K Pong envs stepped through distrl's
Gymnasium wrappers against envs/atari_vector.py (ale-py's C++ AtariVectorEnv, 1 and 2 threads), the batched forward pass of
the dueling Nature CNN for K observations, and packing a flush of 50 3-step transitions for the replay (stacks
compressed with each codec, or each frame once: replay.share_frames).

    python -m bench.acting_cost              # K = 8, 10 s a row
    python -m bench.acting_cost --envs 4 --forward-batches 4,8,16 --out bench/results/acting-cost-issue59.jsonl

The forward pass is timed for each of `--forward-batches` (default K), in float32 and in bfloat16
autocast (`actor.bf16`), per env step: one pass a step over an actor's envs reads the dueling head's
two 3,136 x 512 weight matrices whatever the batch, so more envs an actor share those reads (issue 59:
half of the 2-core Pong actor's main thread was this pass, bench/results/actor-profile-apex-pong-cpu2-issue59.jsonl).
Random actions; ratios to distrl's wrapper chain. Prints figures, and with `--out` appends the env and
forward rows as a sitting of bench/results/; asserts nothing."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from bench import results
from bench.runs import command_line
from distrl.envs.atari_vector import AtariVector
from distrl.envs.make import make_env
from distrl.nets import make_q_network
from distrl.nets.precision import bf16_autocast
from distrl.replay import pack

FRAMES = ("obs", "next_obs")


def flush_of(env, rng, n_step: int = 3, size: int = 50) -> dict[str, np.ndarray]:
    """`size` n-step transitions of one env as an actor's flush holds them: obs_t and next_obs = obs_{t+n}."""
    stacks = [env.reset()[0]]
    while len(stacks) < size + n_step:
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(6)))
        stacks.append(env.reset()[0] if terminated or truncated else obs)
    return {"obs": np.stack(stacks[:size]), "next_obs": np.stack(stacks[n_step:]), "action": np.zeros(size, np.int64)}


def pack_costs(batch: dict[str, np.ndarray], seconds: float) -> None:
    ways = {"stacks, zlib": (FRAMES, "zlib", ()), "stacks, lz4": (FRAMES, "lz4", ()),
            "shared frames, lz4": (FRAMES, "lz4", FRAMES), "shared frames, raw": ((), "zlib", FRAMES)}
    base = None
    for name, (names, codec, shared) in ways.items():
        t, k = time.perf_counter(), 0
        while time.perf_counter() - t < seconds:
            sent = pack(batch, names, codec, shared)
            k += 1
        us = 1e6 * (time.perf_counter() - t) / k / len(batch["action"])
        base = base or us
        wire = sum(sum(map(len, v.blobs)) if hasattr(v, "blobs") else np.asarray(v).nbytes for v in sent.values())
        print(f"pack a flush of {len(batch['action'])}, {name}: {us:.1f} us a transition (x{us / base:.2f}), "
              f"{wire / len(batch['action']):,.0f} B a transition on the wire")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--forward-batches", help="comma-separated batches of the forward pass (default: --envs)")
    p.add_argument("--out", type=Path, help="append a sitting (with the speed index) to this result file")
    args = p.parse_args()
    torch.set_num_threads(1)
    head = results.header(command_line("bench.acting_cost")) if args.out else None
    n, rng, rows = args.envs, np.random.default_rng(0), []
    envs = [make_env("ALE/Pong-v5", "train", seed=j) for j in range(n)]
    for e in envs:
        e.reset()
    t, steps = time.perf_counter(), 0
    while time.perf_counter() - t < args.seconds:
        for e in envs:
            _, _, terminated, truncated, _ = e.step(int(rng.integers(6)))
            if terminated or truncated:
                e.reset()
        steps += n
    base = steps / (time.perf_counter() - t)
    print(f"distrl's wrappers, {n} envs, 1 thread: {base:,.0f} agent steps/s ({4 * base:,.0f} frames/s)")
    rows.append({"contender": f"distrl's wrappers, {n} envs", "agent_steps_per_s": round(base, 1)})
    for threads in (1, 2):
        v = AtariVector("ALE/Pong-v5", n, threads=threads)
        v.reset()
        t, steps = time.perf_counter(), 0
        while time.perf_counter() - t < args.seconds:
            v.step(rng.integers(6, size=n))
            steps += n
        rate = steps / (time.perf_counter() - t)
        print(f"AtariVector (ale-py's C++ vector env), {n} envs, {threads} thread(s): {rate:,.0f} agent steps/s, "
              f"x{rate / base:.2f}")
        rows.append({"contender": f"AtariVector, {n} envs, {threads} thread(s)", "agent_steps_per_s": round(rate, 1),
                     "ratio_to_wrappers": round(rate / base, 3)})
        v.close()
    rows += forward_costs([int(b) for b in (args.forward_batches or str(n)).split(",")], args.seconds / 2)
    pack_costs(flush_of(envs[0], rng), args.seconds / 2)
    if args.out:
        with open(args.out, "a") as f:
            results.write_sitting(f, head, rows)


def forward_costs(batches: list[int], seconds: float) -> list[dict]:
    """The dueling Nature CNN's forward pass, as an actor makes it, per env step at each batch; float32 and bf16."""
    net = make_q_network((4, 84, 84), 6, dueling=True, hidden=(512,)).eval()
    rows, base = [], None
    for b in batches:
        x = torch.zeros(b, 4, 84, 84, dtype=torch.uint8)
        for bf16 in (False, True):
            with torch.no_grad(), bf16_autocast(torch.device("cpu"), bf16):
                for _ in range(5):
                    net(x)
                t, k = time.perf_counter(), 0
                while time.perf_counter() - t < seconds:
                    net(x).float()
                    k += 1
            us = 1e6 * (time.perf_counter() - t) / k / b
            base = base or us
            kind = "bf16" if bf16 else "float32"
            print(f"dueling Nature CNN forward, batch {b}, {kind}, 1 thread: {us * b / 1000:.2f} ms "
                  f"({us:.0f} us per env step, x{base / us:.2f} the first's rate)")
            rows.append({"contender": f"forward, batch {b}, {kind}", "batch": b, "bf16": bf16,
                         "us_per_env_step": round(us, 1), "ratio_to_first": round(base / us, 3)})
    return rows


if __name__ == "__main__":
    main()
