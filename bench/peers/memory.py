"""Comparison 4: memory per stored Atari transition, distrl's replay against SB3's and RLlib's.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.memory [--transitions 100000]
     [--distinct 5000] [--quick]

The data is a consecutive random-play sequence of real preprocessed Pong transitions (bench/replay.py:
ALE v5, no sticky actions, AtariPreprocessing, 4-frame stacks), --distinct of them, cycled up to
--transitions, so consecutive stacks share frames as they do in a real replay. Each contender
stores --transitions of them in its own fresh process (the data is loaded before the baseline is
taken) and reports:

  rss        the process's resident-memory growth from storing them (psutil), over the count: all
             of it, Python objects, indexes and allocator slack included. The headline.
  arrays     what the library itself counts: distrl ReplayTable.nbytes() (compressed blobs with their
             object headers + plain fields; not the ~50 B/slot index), SB3's buffer arrays' nbytes,
             RLlib's episodes' numpy arrays.

Contenders (each as its library's Atari DQN stores a transition):
  distrl              ReplayTable(compress=("obs", "next_obs")): obs and next_obs 4x84x84 uint8 stacks,
                      each deflated (level 1) separately, as distrl's Ape-X sends them.
  sb3                 stable_baselines3 ReplayBuffer, optimize_memory_usage=False (the zoo's Atari
                      setting): observations and next_observations (1, 4, 84, 84) uint8 arrays.
  sb3-optimized       the same with optimize_memory_usage=True (next_obs is the following row).
  rllib               ray.rllib PrioritizedEpisodeReplayBuffer (what RLlib's DQN uses on its new API
                      stack in 2.60): whole episodes (SingleAgentEpisode, numpy-ized) of uint8
                      84x84x4 stacks, one per step plus the last. RLlib's own Atari wrapper would hand
                      it float32 frames (NormalizedImageEnv): 4x these bytes; see pong_throughput.py.
Target (issue): distrl <= 8 KB (8,192 B) per transition; reported, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time

from bench.peers import common as K

CONTENDERS = ("distrl", "sb3", "sb3-optimized", "rllib")
TARGET_BYTES = 8 * 1024
ADD = 50


def _rss() -> int:
    """Resident bytes after a collection and malloc_trim, so freed heap is not counted either way."""
    import ctypes

    import psutil
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return psutil.Process().memory_info().rss


def _load(path: str) -> dict:
    import numpy as np
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _distrl(data: dict, n: int) -> dict:
    import numpy as np

    from distrl.replay import FifoRemover, PrioritizedSampler, ReplayTable

    d = len(data["action"])
    batches = [{k: v[i:i + ADD] for k, v in data.items()} for i in range(0, d - ADD + 1, ADD)]
    base = _rss()
    table = ReplayTable(n, PrioritizedSampler(0.6, 0.4), FifoRemover(), seed=0, compress=("obs", "next_obs"))
    rng = np.random.default_rng(0)
    for i in range(n // ADD):
        table.add(batches[i % len(batches)], priorities=rng.random(ADD) + 0.01)
    rss = _rss() - base
    return {"stored": len(table), "rss_bytes": rss, "array_bytes": table.nbytes(),
            "method": "ReplayTable.nbytes() (compressed blobs + headers + plain fields) and RSS growth"}


def _sb3(data: dict, n: int, optimize: bool) -> dict:
    import gymnasium
    import numpy as np
    from stable_baselines3.common.buffers import ReplayBuffer

    d = len(data["action"])
    base = _rss()
    rb = ReplayBuffer(n, gymnasium.spaces.Box(0, 255, (4, 84, 84), np.uint8), gymnasium.spaces.Discrete(6),
                      device="cpu", n_envs=1, optimize_memory_usage=optimize,
                      handle_timeout_termination=not optimize)  # SB3 requires False with the optimization
    for i in range(n):
        j = i % d
        rb.add(data["obs"][j][None], data["next_obs"][j][None], data["action"][j:j + 1], data["reward"][j:j + 1],
               (data["discount"][j:j + 1] == 0).astype(np.float32), [{}])
    rss = _rss() - base
    arrays = sum(getattr(rb, name).nbytes for name in ("observations", "next_observations", "actions", "rewards",
                                                       "dones", "timeouts") if getattr(rb, name, None) is not None)
    return {"stored": rb.size(), "rss_bytes": rss, "array_bytes": arrays,
            "method": "sum of the buffer's numpy arrays' nbytes (allocated at capacity) and RSS growth"}


def _rllib(data: dict, n: int) -> dict:
    import gymnasium
    import numpy as np
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    from ray.rllib.utils.replay_buffers.prioritized_episode_buffer import PrioritizedEpisodeReplayBuffer

    d = len(data["action"])
    hwc = np.ascontiguousarray(data["obs"].transpose(0, 2, 3, 1))  # RLlib's Atari frames are channels-last
    obs_space = gymnasium.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    ends = list(np.flatnonzero(data["discount"] == 0)) or [d - 1]  # episode ends in the played sequence
    base = _rss()
    buffer = PrioritizedEpisodeReplayBuffer(capacity=n, alpha=0.6)
    stored, arrays, j, episodes = 0, 0, 0, 0
    while stored < n:
        stop = next((e for e in ends if e >= j), d - 1)
        length = min(stop - j + 1, n - stored)
        ep = SingleAgentEpisode(
            observations=[hwc[(j + t) % d].copy() for t in range(length + 1)],  # each step owns its frames
            actions=[int(a) for a in data["action"][j:j + length]],
            rewards=[float(r) for r in data["reward"][j:j + length]],
            terminated=bool(data["discount"][j + length - 1] == 0), observation_space=obs_space,
            action_space=gymnasium.spaces.Discrete(6), len_lookback_buffer=0)
        ep.to_numpy()
        arrays += sum(x.nbytes for x in (ep.get_observations(), ep.get_actions(), ep.get_rewards()))
        buffer.add([ep])
        stored += length
        episodes += 1
        j = (j + length) % d
    rss = _rss() - base
    return {"stored": buffer.get_num_timesteps(), "episodes": episodes, "rss_bytes": rss, "array_bytes": arrays,
            "method": "RSS growth (the buffer holds Python episode objects); arrays: the episodes' numpy "
                      "observations, actions and rewards"}


def child(args: argparse.Namespace) -> None:
    K.limit_cores(args.cores)

    def run() -> dict:
        data = _load(args.data)
        fn = {"distrl": lambda: _distrl(data, args.transitions),
              "sb3": lambda: _sb3(data, args.transitions, False),
              "sb3-optimized": lambda: _sb3(data, args.transitions, True),
              "rllib": lambda: _rllib(data, args.transitions)}[args.child]
        t = time.perf_counter()
        out = fn()
        stored = max(1, out["stored"])
        return {**out, "fill_s": round(time.perf_counter() - t, 1), "rss_per_transition": out["rss_bytes"] / stored,
                "arrays_per_transition": out["array_bytes"] / stored}
    K.guarded(run)


def print_table(rows: list[dict]) -> None:
    print(f"\n{'contender':<14} {'stored':>8} {'RSS B/transition':>17} {'arrays B/tr.':>13} "
          f"{'x distrl (RSS)':>14}  status")
    by = {r["contender"]: r for r in rows if r["status"] == "ok"}
    base = by.get("distrl", {}).get("rss_per_transition")
    for r in rows:
        ratio = r.get("rss_per_transition") / base if base and r.get("rss_per_transition") else None
        print(f"{r['contender']:<14} {K.fmt(r.get('stored')):>8} {K.fmt(r.get('rss_per_transition')):>17} "
              f"{K.fmt(r.get('arrays_per_transition')):>13} {K.fmt(ratio, 1):>14}  {r['status']}")
    if base:
        print(f"\ndistrl: {base:,.0f} B per transition by RSS, target <= {TARGET_BYTES:,} B: "
              f"{'met' if base <= TARGET_BYTES else 'not met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transitions", type=int, default=100_000)
    ap.add_argument("--distinct", type=int, default=5000, help="real consecutive Pong transitions, cycled")
    ap.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="CPUs every contender is pinned to")
    ap.add_argument("--quick", action="store_true", help="10,000 transitions from 1,000 distinct")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    ap.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if args.quick:
        args.transitions, args.distinct = 10_000, 1000

    import numpy as np

    from bench.replay import pong_transitions
    t = time.perf_counter()
    data = pong_transitions(args.distinct, seed=0)
    print(f"{args.distinct:,} consecutive Pong transitions played in {time.perf_counter() - t:.1f} s, "
          f"cycled to {args.transitions:,}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="peers-memory-") as tmp:
        path = os.path.join(tmp, "pong.npz")
        np.savez(path, **data)
        del data
        for name in args.contenders:
            print(f"{name} ...", end=" ", flush=True)
            argv = ["--child", name, "--data", path, "--transitions", str(args.transitions), "--cores", str(args.cores)]
            out = K.run_child("bench.peers.memory", argv, 3600, K.child_log("memory", name))
            rows.append({"contender": name, **out})
            print(out["status"] if out["status"] != "ok" else f"{out['rss_per_transition']:,.0f} B per transition")
    print_table(rows)
    settings = {"transitions": args.transitions, "distinct": args.distinct, "quick": args.quick, "cores": args.cores,
                "target_bytes": TARGET_BYTES, "item": "obs and next_obs 4x84x84 uint8 (real Pong), action, reward, "
                "discount/done"}
    K.finish("memory", rows, settings, not args.no_write,
             K.figures(rows, "status", "rss_per_transition", "arrays_per_transition"), speed=not args.no_speed_index)


if __name__ == "__main__":
    main()
