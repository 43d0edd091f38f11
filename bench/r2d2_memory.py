"""Memory matters and R2D2 has it (issue 36): R2D2 and Ape-X's feed-forward network on CartPole-v1 with its
velocities hidden (distrl/CartPoleNoVelocity-v1), each with its preset, 2 actors on Ray, the same seed and
the same frames, one after the other.

    .venv/bin/python -m bench.r2d2_memory --seed 1
    .venv/bin/python -m bench.r2d2_memory --seed 1 --contenders apex   # one row again

R2D2 runs `r2d2-cartpole`; Ape-X runs `apex-cartpole` (its CartPole values: a 128-128 MLP on the one
observation, n=3, double Q, dueling) with the actors and frames set to R2D2's. Both are evaluated greedily
every `--eval-every` learner updates (10 episodes, in an evaluator process that shares the cores). Writes
bench/results/r2d2-memory-seed<S>.jsonl in bench/results.py's schema: the sittings it held, each with the
contenders not run this time, then this call's sitting (`--no-speed-index` skips the speed index for trial
runs): one row per contender with its evaluations and its final, best and last-quarter-mean greedy
returns. Prints a table; asserts nothing."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench import results
from bench.results import Sitting
from bench.runs import RESULTS, ROOT, command_line, evaluations, run_for
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
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    names = [n for n in args.contenders.split(",") if n]
    if unknown := [n for n in names if n not in PRESETS]:
        p.error(f"unknown contender(s) {', '.join(unknown)}: choose from {', '.join(PRESETS)}")
    frames = args.frames or C.build_config("r2d2", CARTPOLE_NO_VELOCITY).max_frames
    out = RESULTS / f"r2d2-memory-seed{args.seed}.jsonl"
    earlier = results.read(out) if out.exists() else []  # contenders not run this time keep their rows and sittings
    newest = {r["contender"]: i for i, s in enumerate(earlier) for r in s.rows}
    head = results.header(command_line("bench.r2d2_memory"), seed=args.seed, speed=not args.no_speed_index,
                          env=CARTPOLE_NO_VELOCITY, frames=frames, actors=2, runtime="ray", eval_every=args.eval_every)
    ran: dict[str, dict] = {}
    for name in names:
        run_dir = args.run_root / f"{name}-seed{args.seed}"
        cmd = [sys.executable, "-m", "distrl.cli", "train", name, "--env", CARTPOLE_NO_VELOCITY, "--preset",
               PRESETS[name], "--runtime", "ray", "--actors", "2", "--seed", str(args.seed), "--max-frames",
               str(frames), "--run-dir", str(run_dir), "--overwrite", "--quiet",
               "--set", f"eval_every={args.eval_every}", "--set", "eval_episodes=10"]
        print(f"=== {name}: {' '.join(cmd[3:])}", flush=True)
        start = time.monotonic()
        run_for(cmd, 3600, run_dir.with_suffix(".log"))
        ran[name] = summary(name, frames, evaluations(run_dir), time.monotonic() - start)
        sittings = [Sitting(s.header, [r for r in s.rows if newest[r["contender"]] == i and r["contender"] not in ran])
                    for i, s in enumerate(earlier)] + [Sitting(head, list(ran.values()))]
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w") as f:
            for sitting in sittings:
                if sitting.rows:
                    results.write_sitting(f, sitting.header, sitting.rows)
    kept = [r for s in results.read(out) for r in s.rows] if out.exists() else []
    print("| contender | preset | frames | final greedy | best | mean of the last quarter | wall s |")
    for r in kept:
        print(f"| {r['contender']} | {r['preset']} | {r['frames']:,} | {r['final_eval']:.0f} | {r['best_eval']:.0f} "
              f"| {r['last_quarter_mean']:.0f} | {r['wall_s']:.0f} |")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
