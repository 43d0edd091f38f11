"""Memory matters and R2D2 has it (issue 36): R2D2 and Ape-X's feed-forward network on CartPole-v1 with its
velocities hidden (distrl/CartPoleNoVelocity-v1), each with its preset, 2 actors on Ray, the same seed and
the same frames, one after the other.

    .venv/bin/python -m bench.r2d2_memory --seed 1
    .venv/bin/python -m bench.r2d2_memory --seed 1 --contenders apex   # one row again

R2D2 runs `r2d2-cartpole`; Ape-X runs `apex-cartpole` (its CartPole values: a 128-128 MLP on the one
observation, n=3, double Q, dueling) with the actors and frames set to R2D2's. Both are evaluated greedily
every `--eval-every` learner updates (10 episodes, in an evaluator process that shares the cores). Writes
bench/results/r2d2-memory-seed<S>.jsonl: a header, then one row per contender with its evaluations and its
final, best and last-quarter-mean greedy returns (contenders not run this time keep their rows). Prints
a table; asserts nothing."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.machine import machine_info
from bench.runs import RESULTS, ROOT, evaluations, run_for
from distrl import config as C
from distrl.envs.partial import CARTPOLE_NO_VELOCITY

PRESETS = {"r2d2": "r2d2-cartpole", "apex": "apex-cartpole"}


def summary(name: str, frames: int, evals: list[dict], wall_s: float) -> dict:
    means = [e["eval_mean"] for e in evals]
    tail = means[len(means) * 3 // 4:]
    return {"contender": name, "preset": PRESETS[name], "frames": frames, "wall_s": round(wall_s, 1),
            "final_eval": means[-1] if means else None, "best_eval": max(means, default=None),
            "last_quarter_mean": sum(tail) / len(tail) if tail else None, "evaluations": evals}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--contenders", default="r2d2,apex")
    p.add_argument("--frames", type=int, help="both runs' frames (default: r2d2-cartpole's max_frames)")
    p.add_argument("--eval-every", type=int, default=500, help="learner updates between greedy evaluations")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-r2d2-memory")
    args = p.parse_args()
    names = [n for n in args.contenders.split(",") if n]
    if unknown := [n for n in names if n not in PRESETS]:
        p.error(f"unknown contender(s) {', '.join(unknown)}: choose from {', '.join(PRESETS)}")
    frames = args.frames or C.build_config("r2d2", CARTPOLE_NO_VELOCITY).max_frames
    out = RESULTS / f"r2d2-memory-seed{args.seed}.jsonl"
    kept = {}
    if out.exists():
        kept = {r["contender"]: r for r in map(json.loads, out.read_text().splitlines()) if "contender" in r}
    header = {"env": CARTPOLE_NO_VELOCITY, "seed": args.seed, "frames": frames, "actors": 2, "runtime": "ray",
              "eval_every": args.eval_every, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": machine_info()}
    for name in names:
        run_dir = args.run_root / f"{name}-seed{args.seed}"
        cmd = [sys.executable, "-m", "distrl.cli", "train", name, "--env", CARTPOLE_NO_VELOCITY, "--preset",
               PRESETS[name], "--runtime", "ray", "--actors", "2", "--seed", str(args.seed), "--max-frames",
               str(frames), "--run-dir", str(run_dir), "--overwrite", "--quiet",
               "--set", f"eval_every={args.eval_every}", "--set", "eval_episodes=10"]
        print(f"=== {name}: {' '.join(cmd[3:])}", flush=True)
        start = time.monotonic()
        run_for(cmd, 3600, run_dir.with_suffix(".log"))
        kept[name] = {**summary(name, frames, evaluations(run_dir), time.monotonic() - start),
                      "date": header["date"]}  # rows kept from another day keep their own date
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r) + "\n" for r in (header, *kept.values())))
    print("| contender | preset | frames | final greedy | best | mean of the last quarter | wall s |")
    for r in kept.values():
        print(f"| {r['contender']} | {r['preset']} | {r['frames']:,} | {r['final_eval']:.0f} | {r['best_eval']:.0f} "
              f"| {r['last_quarter_mean']:.0f} | {r['wall_s']:.0f} |")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
