"""Replay throughput: adds/s (batches of 50), sample(512) + update_priorities(512), bytes per Atari item.

Run from the repository root: python -m bench.replay [--quick]. Prints figures only; asserts no times.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from distrl.replay import FifoRemover, PrioritizedSampler, ReplayTable, UniformSampler

ADD_BATCH, SAMPLE_BATCH = 50, 512


def cartpole_batches(n_distinct: int, rng):
    return [{"obs": rng.standard_normal((ADD_BATCH, 4), dtype=np.float32),
             "next_obs": rng.standard_normal((ADD_BATCH, 4), dtype=np.float32),
             "action": rng.integers(0, 2, ADD_BATCH),
             "reward": np.ones(ADD_BATCH, np.float32),
             "discount": np.full(ADD_BATCH, 0.99, np.float32)} for _ in range(n_distinct)]


def pong_transitions(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Real preprocessed Pong stacks from random play (stepping is slow, so the bench cycles these)."""
    import ale_py
    import gymnasium
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gymnasium.register_envs(ale_py)
    env = gymnasium.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
    env = FrameStackObservation(AtariPreprocessing(env), 4)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = {"obs": np.empty((n, 4, 84, 84), np.uint8), "next_obs": np.empty((n, 4, 84, 84), np.uint8),
           "action": np.empty(n, np.int64), "reward": np.empty(n, np.float32), "discount": np.empty(n, np.float32)}
    for i in range(n):
        a = int(rng.integers(env.action_space.n))
        nxt, r, term, trunc, _ = env.step(a)
        out["obs"][i], out["next_obs"][i], out["action"][i] = obs, nxt, a
        out["reward"][i], out["discount"][i] = r, 0.0 if term else 0.99
        obs = env.reset()[0] if term or trunc else nxt
    env.close()
    return out


def fill(table: ReplayTable, batches, n_items: int, rng) -> float:
    t = time.perf_counter()
    for i in range(n_items // ADD_BATCH):
        table.add(batches[i % len(batches)], priorities=rng.random(ADD_BATCH) + 0.01)
    return time.perf_counter() - t


def sample_loop(table: ReplayTable, iters: int, rng) -> tuple[float, float]:
    t_sample = t_update = 0.0
    for _ in range(iters):
        t0 = time.perf_counter()
        keys, _, _ = table.sample(SAMPLE_BATCH)
        t1 = time.perf_counter()
        table.update_priorities(keys, rng.random(SAMPLE_BATCH) + 0.01)
        t_update += time.perf_counter() - t1
        t_sample += t1 - t0
    return t_sample / iters, t_update / iters


def report(name: str, table: ReplayTable, n: int, fill_s: float, iters: int, rng) -> None:
    s, u = sample_loop(table, iters, rng)
    index_t = time.perf_counter()
    for _ in range(iters):
        table.sampler.sample(SAMPLE_BATCH, table._rng)
    index_ms = (time.perf_counter() - index_t) / iters * 1e3
    print(f"{name}: {n:,} items")
    print(f"  add (batches of {ADD_BATCH}):      {n / fill_s:12,.0f} items/s  ({fill_s / (n / ADD_BATCH) * 1e6:7.1f} us per add call)")
    print(f"  sample({SAMPLE_BATCH}):              {SAMPLE_BATCH / s:12,.0f} items/s  ({s * 1e3:7.3f} ms per batch;"
          f" index work alone {index_ms:.3f} ms)")
    print(f"  update_priorities({SAMPLE_BATCH}):   {SAMPLE_BATCH / u:12,.0f} items/s  ({u * 1e3:7.3f} ms per call)")
    print(f"  sample + update:           {SAMPLE_BATCH / (s + u):12,.0f} items/s  ({1 / (s + u):,.0f} learner batches/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small smoke run (seconds)")
    args = ap.parse_args()
    n_small, n_atari, n_frames, iters = (20_000, 2_000, 300, 20) if args.quick else (1_000_000, 100_000, 3_000, 200)
    rng = np.random.default_rng(0)

    batches = cartpole_batches(64, rng)
    for sampler in (PrioritizedSampler(), UniformSampler()):
        table = ReplayTable(n_small, sampler=sampler, remover=FifoRemover(), seed=0)
        fill_s = fill(table, batches, n_small, rng)
        report(f"CartPole-size, {type(sampler).__name__}", table, n_small, fill_s, iters, rng)
        for _ in range(2):  # the first trim pays numpy's lazy imports; report the second
            for b in batches[:20]:
                table.add(b)
            t = time.perf_counter()
            removed = table.trim()
        print(f"  trim() of {removed} (FIFO):       {(time.perf_counter() - t) * 1e3:7.3f} ms")
        del table

    t = time.perf_counter()
    data = pong_transitions(n_frames)
    print(f"\nPong: {n_frames} real transitions generated in {time.perf_counter() - t:.1f} s, cycled to {n_atari:,}")
    pong = [{k: v[i : i + ADD_BATCH] for k, v in data.items()} for i in range(0, n_frames - ADD_BATCH + 1, ADD_BATCH)]
    table = ReplayTable(n_atari, sampler=PrioritizedSampler(), remover=FifoRemover(), seed=0,
                        compress=("obs", "next_obs"))
    fill_s = fill(table, pong, n_atari, rng)
    report("Atari-size (obs, next_obs 4x84x84 uint8, deflate-1), PrioritizedSampler", table, n_atari, fill_s,
           max(5, iters // 10), rng)
    raw = sum(v[0].nbytes for v in data.values())
    per_item = table.nbytes() / len(table)
    print(f"  bytes per stored transition: {per_item:,.0f} B (raw {raw:,} B, {raw / per_item:.0f}x smaller;"
          " zlib payload + bytes-object headers + plain fields)")


if __name__ == "__main__":
    main()
