"""The TD3-values check (issue 33): distrl's Ape-X DPG set to TD3's values (the apex-dpg-td3 preset: one
actor, inline) against Stable-Baselines3's TD3 with the same values, greedy return per frame, over seeds.

    bash bench/peers/setup.sh
    bench/peers/.venv/bin/python -m bench.peers.td3_check --env HalfCheetah-v5 --seeds 1,2,3 --frames 100000
    bench/peers/.venv/bin/python -m bench.peers.td3_check --collect    # results + figure from --run-root

The question is what each learns per frame, not how fast it runs, so the runs (one single-threaded
process each) go `--parallel` at a time and no clock is compared. Both evaluate the noiseless policy
every 5,000 frames, 5 episodes: SB3 through continuous.py's child (seed S + 1000), distrl through its
own evaluator every 5,000 learner updates (one update per env step after the 10,000 random frames), at
the frames its metrics give for that update.

Writes bench/results/td3-check-<env>.jsonl in bench/results.py's schema (one sitting: one row per contender,
seed and evaluation; `--no-speed-index` skips the speed index) and
bench/figures/td3-check-<env>.png (mean and min-max band over seeds against frames), and prints each
contender's evaluations at every 25,000 frames: per seed, the mean, and the difference of the means
over its standard error (|z| < 2: within seed noise; given from 3 seeds each). Asserts nothing."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from bench import results as R
from bench.peers.continuous import EVAL_EPISODES, HYPERPARAMS, peer_rows
from bench.runs import RESULTS, ROOT, command_line, evaluations, run_for

CONTENDERS = ("distrl-td3-values", "sb3-td3")
EVAL_EVERY = 5000
MARK_EVERY = 25_000


def command(name: str, env: str, seed: int, frames: int, run_dir: Path, peer_out: Path) -> list[str]:
    if name == "sb3-td3":
        return [sys.executable, "-m", "bench.peers.continuous", "--child", "sb3-td3", "--env", env, "--seed", str(seed),
                "--budget-s", str(10**7), "--log-every-s", "60", "--eval-every-frames", str(EVAL_EVERY),
                "--max-frames", str(frames), "--out", str(peer_out)]
    return [sys.executable, "-m", "distrl.cli", "train", "apex-dpg", "--env", env, "--preset", "apex-dpg-td3",
            "--runtime", "inline", "--max-frames", str(frames), "--seed", str(seed), "--run-dir", str(run_dir),
            "--overwrite", "--quiet", "--set", "log_every_s=1", "--set", f"eval_every={EVAL_EVERY}"]


def distrl_evaluations(run_dir: Path) -> list[dict]:
    """(frames, mean) per periodic evaluation (the frames of the metrics rows interpolated at its update
    count), then the final one at the run's last frame."""
    if not (run_dir / "metrics.csv").exists():
        return []
    with open(run_dir / "metrics.csv", newline="") as f:
        metrics = [(float(m["updates"]), float(m["frames"])) for m in csv.DictReader(f)]
    evals = [(e["updates"], e["eval_mean"]) for e in evaluations(run_dir)]
    updates, frames = np.array(metrics).T
    out = [{"frames": int(np.interp(u, updates, frames)), "eval_mean": mean} for u, mean in evals]
    summary = json.loads((run_dir / "summary.json").read_text()) if (run_dir / "summary.json").exists() else {}
    if summary.get("eval_return_mean") is not None:  # the run's final evaluation, at its last frame
        out.append({"frames": int(summary["frames"]), "eval_mean": float(summary["eval_return_mean"])})
    return out


def peer_evaluations(out: Path) -> list[dict]:
    return [{"frames": r["frames"], "eval_mean": r["eval_mean"]} for r in peer_rows(out) if r["eval_mean"] is not None]


def at(evals: list[dict], frames: int) -> float | None:
    """The latest evaluation made by `frames` (within half an evaluation interval after it); None for a
    run that has not got there (yet)."""
    if not evals or evals[-1]["frames"] < frames - EVAL_EVERY // 2:
        return None
    done = [e["eval_mean"] for e in evals if e["frames"] <= frames + EVAL_EVERY // 2]
    return done[-1] if done else None


def table(results: dict[str, dict[int, list[dict]]], frames: int) -> list[str]:
    lines = []
    for mark in range(MARK_EVERY, frames + 1, MARK_EVERY):
        values = {name: [at(evals, mark) for evals in runs.values()] for name, runs in results.items()}
        cells, stats = [], {}
        for name, vals in values.items():
            got = [v for v in vals if v is not None]
            if got:
                stats[name] = (float(np.mean(got)), float(np.std(got, ddof=1)) if len(got) > 1 else 0.0, len(got))
            cells.append(f"{name}: " + ", ".join("-" if v is None else f"{v:,.0f}" for v in vals)
                         + (f" (mean {stats[name][0]:,.0f})" if name in stats else ""))
        z = ""
        if len(stats) == 2:
            (m1, s1, n1), (m2, s2, n2) = stats.values()
            se = (s1**2 / n1 + s2**2 / n2) ** 0.5
            z = f"; difference {m1 - m2:+,.0f}" + (f", z {(m1 - m2) / se:+.2f}" if se > 0 and min(n1, n2) >= 3 else "")
        lines.append(f"{mark:>7,} frames | " + " | ".join(cells) + z)
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="HalfCheetah-v5")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--frames", type=int, default=100_000)
    p.add_argument("--parallel", type=int, default=2, help="runs at a time (each one single-threaded process)")
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-td3-check")
    p.add_argument("--collect", action="store_true", help="run nothing: rebuild the results and the figure")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    names = [n for n in args.contenders.split(",") if n]
    if unknown := [n for n in names if n not in CONTENDERS]:
        p.error(f"unknown contender(s) {', '.join(unknown)}: choose from {', '.join(CONTENDERS)}")
    tag = f"td3-check-{args.env.replace('/', '-')}"
    head = R.header(command_line("bench.peers.td3_check"), seed=seeds, speed=not (args.no_speed_index or args.collect),
                    env=args.env, frames=args.frames,
                    hyperparameters={"sb3-td3": HYPERPARAMS["sb3-td3"],
                                     "distrl-td3-values": "distrl presets: apex-dpg-td3, --runtime inline"},
                    eval_episodes=EVAL_EPISODES, eval_every_frames=EVAL_EVERY)
    if args.collect:
        head["speed_index_note"] = "not measured: --collect rebuilds the rows of runs made before"
    paths = {(n, s): (args.run_root / f"{tag}-{n}-seed{s}", args.run_root / f"{tag}-{n}-seed{s}.jsonl",
                      args.run_root / f"{tag}-{n}-seed{s}.log") for n in names for s in seeds}

    if not args.collect:
        def one(key: tuple[str, int]) -> None:
            run_dir, peer_out, log = paths[key]
            peer_out.unlink(missing_ok=True)
            print(f"=== {key[0]} seed {key[1]}: {args.env}, {args.frames:,} frames (log {log})", flush=True)
            t = time.perf_counter()
            run_for(command(key[0], args.env, key[1], args.frames, run_dir, peer_out), 10**7, log, stop_ray=False)
            print(f"    {key[0]} seed {key[1]} done in {time.perf_counter() - t:,.0f} s", flush=True)
        # interleaved, so a stopped session still holds both contenders' first seeds
        order = [(n, s) for s in seeds for n in names]
        with ThreadPoolExecutor(args.parallel) as pool:
            list(pool.map(one, order))

    results = {n: {s: distrl_evaluations(paths[n, s][0]) if n.startswith("distrl") else peer_evaluations(paths[n, s][1])
                   for s in seeds} for n in names}
    out = RESULTS / f"{tag}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        R.write_sitting(f, head, [{"contender": n, "seed": s, **e} for n, runs in results.items()
                                  for s, evals in runs.items() for e in evals])
    for line in table(results, args.frames):
        print(line)

    from distrl.plotting import plot_comparison
    curves = {n: [{"frames": np.array([e["frames"] for e in evals], dtype=float),
                   "eval_mean": np.array([e["eval_mean"] for e in evals], dtype=float)}
                  for evals in runs.values() if evals] for n, runs in results.items()}
    figure = plot_comparison({n: c for n, c in curves.items() if c}, ROOT / "bench" / "figures" / f"{tag}.png",
                             y="eval_mean", xs=("frames",), ylabel=f"greedy return ({EVAL_EPISODES} episodes)",
                             title=f"{args.env}: TD3's values in distrl and in SB3, seeds {args.seeds}")
    print(f"wrote {out} and {figure}")


if __name__ == "__main__":
    main()
