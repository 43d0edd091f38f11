"""Where R2D2's learner time goes (issue 36): R2D2Learner.step at the r2d2-minatar shapes (32 sequences of
a 20-step burn-in and a 40-step trace, MinAtar Breakout's 4x10x10 frames, LSTM 128) and at the paper's
Atari shapes scaled down in batch (`--shape atari-b8`), one thread, batches of random data (an update's cost does
not depend on what it learns), in float32 and with `learner.bf16` (bfloat16 autocast: fast only on a CPU
with bf16 units, e.g. AVX512-BF16 or AMX; elsewhere it can be slower than float32).

    .venv/bin/python -m bench.r2d2_learner_step                 # MinAtar shapes, 3 rounds
    .venv/bin/python -m bench.r2d2_learner_step --profile       # and where one case's time goes

Each round times `--updates` updates of every case, alternating the cases so that a noisy neighbour hits
them alike. Prints updates/s (median of the rounds) and each case's ratio to the first. Asserts nothing."""

from __future__ import annotations

import argparse

import numpy as np
import torch

from bench.machine import versions
from bench.timing import alternating_rates
from distrl.architectures.r2d2.config import R2D2LearnerConfig
from distrl.components.r2d2_learner import R2D2Learner
from distrl.nets.recurrent_q import RecurrentQNetwork

SHAPES = {
    # name: (obs shape, actions, batch, burn-in, trace, LSTM units)
    "minatar": ((4, 10, 10), 3, 32, 20, 40, 128),
    "atari-b8": ((4, 84, 84), 6, 8, 40, 80, 512),
}


def make_batch(rng: np.random.Generator, obs_shape, actions: int, b: int, burn: int, trace: int, units: int,
               first_sequences: int) -> dict[str, np.ndarray]:
    """A replay batch as the sequence adder writes it; `first_sequences` of the b start an episode (padding
    where their burn-in would be), the case the learner's masked burn-in exists for."""
    length = burn + trace
    mask = np.ones((b, length), bool)
    mask[:first_sequences, :burn] = False
    return {"obs": rng.integers(0, 2, (b, length + 1, *obs_shape), dtype=np.uint8),  # MinAtar's and Atari's frames
            "prev_action": rng.integers(0, actions, (b, length)).astype(np.float32),
            "prev_reward": rng.normal(size=(b, length)).astype(np.float32),
            "action": rng.integers(0, actions, (b, length)).astype(np.float32),
            "reward": rng.normal(size=(b, length)).astype(np.float32),
            "discount": np.full((b, length), 0.99, np.float32), "mask": mask,
            "state_h": rng.normal(size=(b, units)).astype(np.float32),
            "state_c": rng.normal(size=(b, units)).astype(np.float32)}


def case(shape: str, first_sequences: int, bf16: bool = False):
    obs_shape, actions, b, burn, trace, units = SHAPES[shape]
    torch.manual_seed(0)
    cfg = R2D2LearnerConfig(batch_size=b, burn_in=burn, trace=trace, n_step=5, target_update=500,
                            lr=2.5e-4, adam_eps=1e-8, grad_clip=10.0, bf16=bf16)
    learner = R2D2Learner(RecurrentQNetwork(obs_shape, actions, lstm_units=units), cfg)
    rng = np.random.default_rng(0)
    batches = [make_batch(rng, obs_shape, actions, b, burn, trace, units, first_sequences) for _ in range(4)]
    weights = np.ones(b, np.float32)

    def run(n: int) -> None:
        for i in range(n):
            learner.step(batches[i % 4], weights)
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", choices=SHAPES, default="minatar")
    p.add_argument("--updates", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--profile", action="store_true", help="print torch.profiler's table for the first case")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    b = SHAPES[args.shape][2]
    cases = {f"{args.shape}, no episode starts": case(args.shape, 0),
             f"{args.shape}, 1 in 8 sequences starts an episode": case(args.shape, b // 8),
             f"{args.shape}, 1 in 8, learner.bf16": case(args.shape, b // 8, bf16=True)}
    rates = alternating_rates(cases, args.rounds, warmup=3, n=args.updates)
    print(f"{versions()}; {args.threads} thread(s), {args.updates} updates x {args.rounds} rounds")
    print("| case | updates/s | sequences/s | vs the first |")
    print("|---|---|---|---|")
    first = next(iter(rates.values()))
    for n, u in rates.items():
        print(f"| {n} | {u:.1f} | {u * b:,.0f} | {u / first:.2f}x |")
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        run = next(iter(cases.values()))
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            run(args.updates)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


if __name__ == "__main__":
    main()
