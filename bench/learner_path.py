"""The Ape-X learner's data path on Atari frames (issue 34), without a GPU: samples/s from K replay
shards to a batch of 512 on the learner's device, and where the time goes.

    python -m bench.learner_path                       # K = 1 and 4; zlib, lz4 and raw frames; 20 s each
    python -m bench.learner_path --shards 4 --seconds 60 --device cuda

The replay holds real Pong-v5 transitions (bench/replay.py's: Atari preprocessing, random play, stacks
of 4 84x84 frames, obs and next_obs, as Ape-X's actors send them). Each row runs what the learner's sample
thread and step do with the data, in this process, one after another: a prioritized sample of 512
from the shards (ShardedReplay: a multinomial over shards, each table's sample, the parts joined),
the batch to the device (torch.as_tensor, then .to(device), or components/staging.py's page-locked join), and
the priority write-back. The shards
are local tables, so the figures are the host-side work alone, without Ray's transfers; a change to
the data path shows here as a ratio against the baseline row of the same run (zlib, the shards of
apex-atari-fast, joined into fresh arrays). Asserts nothing; prints figures and ratios, and writes
bench/results/learner-path-<host>.jsonl in bench/results.py's schema (one sitting: the header with the
device and the settings, one row per frames x shards x join; `--no-speed-index` skips the speed index)."""

from __future__ import annotations

import argparse
import socket
import time
from pathlib import Path

import numpy as np
import torch

from bench import results
from bench.replay import pong_transitions  # real Pong stacks from random play
from bench.runs import RESULTS, command_line
from distrl.components.staging import DeviceStager
from distrl.replay import PrioritizedSampler, ReplayTable
from distrl.replay.sharded import ShardedReplay

BATCH = 512
FRAMES = ("obs", "next_obs")


def fill(data: dict[str, np.ndarray], shards: int, frames: str) -> ShardedReplay:
    """`frames`: the codec (replay.codec), "raw" for frames stored uncompressed (replay.compress false), each
    with "shared-" before it for each frame stored once (replay.share_frames)."""
    n = len(data["action"])
    codec = frames.removeprefix("shared-")
    tables = [ReplayTable(n, PrioritizedSampler(0.6, 0.4), seed=i, compress=() if codec == "raw" else FRAMES,
                          codec="zlib" if codec == "raw" else codec,
                          shared=FRAMES if frames.startswith("shared-") else ()) for i in range(shards)]
    client = ShardedReplay(tables, PrioritizedSampler(0.6, 0.4), seed=0)
    rng = np.random.default_rng(1)
    for start in range(0, n, 50):  # the actors' flushes of 50, round-robin over the shards
        part = {k: v[start:start + 50] for k, v in data.items()}
        client.add(part, rng.uniform(0.1, 2.0, len(part["action"])))
    return client


def measure(client: ShardedReplay, seconds: float, device: torch.device, staged: bool) -> dict:
    """staged: the frames joined into reused buffers (components/staging.py's DeviceStager: page-locked,
    copied on the sample thread's stream, on a GPU; plain reused arrays on a CPU, where nothing is copied);
    else joined into fresh arrays and copied from pageable memory (before issue 34's change)."""
    stages = {"sample": 0.0, "to_device": 0.0, "priorities": 0.0}
    stager, buffers = DeviceStager(device, FRAMES), None
    batches, rng, start = 0, np.random.default_rng(2), time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        if staged and device.type == "cuda":
            keys, batch, weights = stager.sample(client, BATCH)
        elif staged:
            keys, batch, weights = client.sample(BATCH, out=buffers)
            buffers = {k: batch[k] for k in FRAMES}
        else:
            keys, batch, weights = client.sample(BATCH)
        t1 = time.perf_counter()
        tensors = [torch.as_tensor(batch[k]).to(device, non_blocking=True) for k in FRAMES]
        if device.type == "cuda":
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        client.update_priorities(keys, rng.uniform(0.1, 2.0, BATCH))
        t3 = time.perf_counter()
        stages["sample"] += t1 - t0
        stages["to_device"] += t2 - t1
        stages["priorities"] += t3 - t2
        batches += 1
        del tensors
    wall = time.perf_counter() - start
    return {"batches_per_s": batches / wall, "samples_per_s": batches * BATCH / wall,
            **{f"{k}_ms": 1000 * v / batches for k, v in stages.items()}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--transitions", type=int, default=20_000)
    p.add_argument("--shards", default="1,4")
    p.add_argument("--codecs", default="zlib,lz4,raw,shared-lz4,shared-raw",
                   help="frame storage: zlib, lz4 (replay.codec) or raw (uncompressed); shared-X: each frame once")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", type=Path, default=RESULTS / f"learner-path-{socket.gethostname()}.jsonl")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    device = torch.device(args.device)
    head = results.header(command_line("bench.learner_path"), speed=not args.no_speed_index, device=str(device),
                          transitions=args.transitions, batch=BATCH, seconds=args.seconds)
    torch.set_num_threads(1)
    t = time.perf_counter()
    data = pong_transitions(args.transitions)
    print(f"{args.transitions:,} Pong transitions in {time.perf_counter() - t:.0f} s; batch {BATCH}, {args.seconds:.0f} s "
          f"a row, device {device}", flush=True)
    rows = []
    for codec in args.codecs.split(","):
        for shards in map(int, args.shards.split(",")):
            client = fill(data, shards, codec)
            held = sum(t.nbytes() for t in client.shards) / args.transitions
            for staged in (False, True):
                row = {"frames": codec, "shards": shards, "join": "staged" if staged else "concat",
                       "bytes_per_transition": held, **measure(client, args.seconds, device, staged)}
                rows.append(row)
                print(f"{codec:>4} K={shards} {row['join']:>6}: {row['samples_per_s']:9,.0f} samples/s "
                      f"({row['batches_per_s']:.1f} batches/s): sample {row['sample_ms']:.1f} ms, to device "
                      f"{row['to_device_ms']:.1f} ms, priorities {row['priorities_ms']:.1f} ms; "
                      f"{held:,.0f} B a transition", flush=True)
    base = next(r for r in rows if r["frames"] == "zlib" and r["join"] == "concat"
                and r["shards"] == max(map(int, args.shards.split(","))))
    print(f"\n| frames | shards | join | samples/s | x baseline (zlib, K={base['shards']}, concat) | sample ms | "
          "to device ms | priorities ms | bytes a transition |\n|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['frames']} | {r['shards']} | {r['join']} | {r['samples_per_s']:,.0f} | "
              f"{r['samples_per_s'] / base['samples_per_s']:.2f} | {r['sample_ms']:.1f} | {r['to_device_ms']:.1f} | "
              f"{r['priorities_ms']:.1f} | {r['bytes_per_transition']:,.0f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        results.write_sitting(f, head, rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
