"""Where an Ape-X actor's time goes on Atari (issue 34), on one core: K Pong envs stepped through distrl's
Gymnasium wrappers against envs/atari_vector.py (ale-py's C++ AtariVectorEnv, 1 and 2 threads), the batched forward pass of
the dueling Nature CNN for K observations, and packing a flush of 50 3-step transitions for the replay (stacks
compressed with each codec, or each frame once: replay.share_frames).

    python -m bench.acting_cost              # K = 8, 10 s a row

Random actions; ratios to distrl's wrapper chain. Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from distrl.envs.atari_vector import AtariVector
from distrl.envs.make import make_env
from distrl.nets import make_q_network
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
    args = p.parse_args()
    torch.set_num_threads(1)
    n, rng = args.envs, np.random.default_rng(0)
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
        v.close()
    net = make_q_network((4, 84, 84), 6, dueling=True, hidden=(512,)).eval()
    x = torch.zeros(n, 4, 84, 84, dtype=torch.uint8)
    with torch.no_grad():
        for _ in range(5):
            net(x)
        t, k = time.perf_counter(), 0
        while time.perf_counter() - t < args.seconds / 2:
            net(x)
            k += 1
    ms = 1000 * (time.perf_counter() - t) / k
    print(f"dueling Nature CNN forward, batch {n}, 1 thread: {ms:.2f} ms ({ms / n:.2f} ms per env step)")
    pack_costs(flush_of(envs[0], rng), args.seconds / 2)


if __name__ == "__main__":
    main()
