"""The DQN learner's step in float32 and with `learner.bf16` (issue 34): DQNLearner.step (double Q, Adam, the
dueling network) on Pong's 4x84x84 stacks at the 2-core plan's batch 64 and the paper's 512, and on MinAtar
Breakout's 4x10x10 frames at apex-minatar's 128; one thread, random batches (an update's cost does not depend on
what it learns). bfloat16 autocast is fast only on a CPU with bf16 units (AVX512-BF16 or AMX); elsewhere it can
be slower than float32.

    .venv/bin/python -m bench.dqn_learner_step                  # every shape, 3 rounds

Each round times every case for about `--seconds` (as many updates as a warm batch of 3 showed fit), alternating
the cases so that a noisy neighbour hits them alike.
Prints updates/s (median of the rounds) and bf16's ratio to float32 at the same shape. Asserts nothing."""

from __future__ import annotations

import argparse

import numpy as np
import torch

from bench.machine import versions
from bench.timing import alternating_rates
from distrl.components.learner import DQNLearner
from distrl.config.sections import LearnerConfig
from distrl.nets import make_q_network

SHAPES = {  # name: (obs shape, actions, batch)
    "pong-b64": ((4, 84, 84), 6, 64),
    "pong-b512": ((4, 84, 84), 6, 512),
    "minatar-b128": ((4, 10, 10), 3, 128),
}


def case(shape: str, bf16: bool):
    obs_shape, actions, b = SHAPES[shape]
    torch.manual_seed(0)
    learner = DQNLearner(make_q_network(obs_shape, actions), LearnerConfig(batch_size=b, optimizer="adam"), bf16=bf16)
    rng = np.random.default_rng(0)
    high = 256 if obs_shape[-1] == 84 else 2
    batches = [{"obs": rng.integers(0, high, (b, *obs_shape), dtype=np.uint8),
                "next_obs": rng.integers(0, high, (b, *obs_shape), dtype=np.uint8),
                "action": rng.integers(0, actions, b), "reward": rng.normal(size=b).astype(np.float32),
                "discount": np.full(b, 0.97, np.float32)} for _ in range(2)]
    weights = np.ones(b, np.float32)

    def run(n: int) -> None:
        for i in range(n):
            learner.step(batches[i % 2], weights)
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated, from: " + ", ".join(SHAPES))
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    shapes = args.shapes.split(",")
    cases = {(s, bf16): case(s, bf16) for s in shapes for bf16 in (False, True)}
    rates = alternating_rates(cases, args.rounds, warmup=3, seconds=args.seconds)
    print(f"{versions()}; {args.threads} thread(s), about {args.seconds:g} s x {args.rounds} rounds")
    print("| shape | float32 updates/s | bf16 updates/s | bf16 / float32 |")
    print("|---|---|---|---|")
    for s in shapes:
        f32, b16 = rates[s, False], rates[s, True]
        print(f"| {s} | {f32:.1f} | {b16:.1f} | {b16 / f32:.2f}x |")


if __name__ == "__main__":
    main()
