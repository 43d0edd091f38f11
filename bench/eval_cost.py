"""What one greedy evaluation costs the evaluator's core (issue 59: the evaluator's share of 2 cores).

On the 2-core Pong plan the evaluator is one of four processes on two cores (actor, learner, replay shard,
evaluator) and starts a new evaluation as soon as the last one ends, so whatever it spends is taken from
the actor and the learner. This times Ape-X's evaluator as bench.pong runs it (apex-atari-fast's net, the
Ape-X protocol with 8 episodes, one torch thread) on the same episodes, played one at a time (distrl's
evaluate) and `--together` at a time (one batched forward pass a step), alternating the variants over
`--rounds` rounds so that a noisy neighbour hits both alike. The net is untrained: an evaluation's cost
is its steps', and a step costs the same whatever the net has learned.

    .venv/bin/python -m bench.eval_cost                          # Pong, 1 and 8 at a time, 2 rounds
    .venv/bin/python -m bench.eval_cost --out bench/results/eval-cost-issue59.jsonl

Prints, for each variant, the median over rounds of the CPU seconds per 1,000 agent steps (this process's,
torch and the emulator together) and the wall seconds of one evaluation, and the ratio to one at a time;
with --out, a sitting of bench/results/ with a row per variant and round. Asserts nothing."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from bench import results
from bench.runs import command_line


def evaluator(env_id: str, episodes: int, max_frames: int):
    """Ape-X's evaluator for bench.pong's run (its preset and the protocol it gives every system)."""
    import distrl  # noqa: F401 - fills the registry
    from bench.pong import PRESETS, SAME_EVALUATION
    from distrl.architectures import make_architecture
    from distrl.config import build_config

    cfg = build_config("apex", env_id, PRESETS["apex"], {**SAME_EVALUATION, "eval_episodes": episodes,
                                                          "eval_max_frames": max_frames})
    return make_architecture(cfg).make_evaluator()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="ALE/Pong-v5")
    p.add_argument("--episodes", type=int, default=8, help="episodes an evaluation (bench.pong's 8)")
    p.add_argument("--together", type=int, default=8, help="episodes at once in the batched variant")
    p.add_argument("--max-frames", type=int, default=20_000,
                   help="emulator frames an episode at most (the protocol's 108,000 would only lengthen the rows)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", type=Path, help="also append a sitting to this result file")
    args = p.parse_args()
    torch.set_num_threads(1)  # the evaluator's role has one torch thread
    ev = evaluator(args.env, args.episodes, args.max_frames)
    from distrl.envs import evaluate

    variants = {"one at a time": 1, f"{args.together} at a time": args.together}
    rows = []
    for r in range(args.rounds):
        for name, together in variants.items():
            steps = 0

            def counted(batch: np.ndarray) -> np.ndarray:
                nonlocal steps
                steps += len(batch)
                return ev.policy(batch)

            wall, cpu = time.perf_counter(), time.process_time()
            returns = evaluate(args.env, counted, args.episodes, epsilon=ev.epsilon, seed=ev.seed,
                               max_episode_frames=args.max_frames, together=together)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            rows.append({"contender": name, "round": r, "together": together, "episodes": len(returns),
                         "greedy_steps": steps, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
                         "cpu_s_per_1000_steps": round(1000 * cpu / steps, 4), "returns": returns})
            print(f"round {r} {name:>14}: {steps:,} greedy steps, {cpu:.1f} CPU s, {wall:.1f} s, "
                  f"{1000 * cpu / steps:.3f} CPU s per 1,000 steps", flush=True)
    base = statistics.median(x["cpu_s_per_1000_steps"] for x in rows if x["together"] == 1)
    for name, together in variants.items():
        mine = [x for x in rows if x["together"] == together]
        per = statistics.median(x["cpu_s_per_1000_steps"] for x in mine)
        print(f"{name:>14}: {per:.3f} CPU s per 1,000 greedy steps, {statistics.median(x['wall_s'] for x in mine):.1f} s "
              f"an evaluation; {base / per:.2f}x one at a time")
    if args.out:
        with open(args.out, "a") as f:
            results.write_sitting(f, results.header(command_line("bench.eval_cost"), preset="apex-atari-fast",
                                                    env=args.env, threads=1), rows)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
