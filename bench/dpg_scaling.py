"""Ape-X DPG's Figure 3 shape (Horgan et al. 2018; issue 33): one task, the default preset, 2 / 4 / 8 / 14
actors on Ray, the same wall-clock budget each, one after another; greedy return against wall time.

    bench/peers/.venv/bin/python -m bench.dpg_scaling --env HalfCheetah-v5 --actors 2,4,8,14 --budget-s 150
    bench/peers/.venv/bin/python -m bench.dpg_scaling --actors 8,14      # adds to the file's 2 and 4
    bench/peers/.venv/bin/python -m bench.dpg_scaling --collect          # rebuild results + figure only

Made for the GPU machine's 16 cores (bench/device/dpg_scaling.sh runs it in a lease); on a 2-core machine
more than 2 actors only share the same cores. Each run is `distrl train apex-dpg --env ENV --runtime ray
--actors N --seed S` with the preset distrl picks for N actors and nothing else set but a greedy
evaluation every 1,000 updates (5 noiseless episodes, in an evaluator process beside the actors). The
learner takes the GPU where the machine has one.

Writes bench/results/dpg-scaling-<env>-seed<S>-<budget>s.jsonl in bench/results.py's schema (the sittings
it held, each with the actor counts not run this time, then this call's sitting: one row per actor count
with its curve; `--no-speed-index` skips the speed index for trial runs) and
bench/figures/dpg-scaling-<env>-seed<S>.png.
Prints a table: greedy return at a quarter, half and all of the budget, the best, frames/s, updates/s and
the time to the 2-actor run's final return. Asserts nothing."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from bench import results
from bench.results import Sitting
from bench.runs import RACE_FRAMES, RESULTS, ROOT, command_line, distrl_rows, eval_summary, run_for

SETTINGS = {"eval_every": 1000, "eval_episodes": 5, "log_every_s": 10.0}


def command(env: str, seed: int, actors: int, run_dir: Path) -> list[str]:
    sets = [x for k, v in SETTINGS.items() for x in ("--set", f"{k}={v}")]
    return [sys.executable, "-m", "distrl.cli", "train", "apex-dpg", "--env", env, "--runtime", "ray",
            "--actors", str(actors), "--seed", str(seed), "--run-dir", str(run_dir), "--overwrite", "--quiet",
            "--max-frames", str(RACE_FRAMES), *sets]  # the clock ends a run, not the preset's frames


def row(actors: int, rows: list[dict], budget_s: float) -> dict:
    """One actor count's summary and curve (wall_s, frames, greedy mean at each evaluation)."""
    curve = [(r["wall_s"], r["frames"], r["eval_mean"]) for r in rows if r["eval_mean"] is not None]
    marks = {f"eval_at_{f}": f * budget_s for f in (0.25, 0.5, 1.0)}
    return {"actors": actors, **eval_summary(rows, marks), "curve": curve}


def time_to(curve: list, score: float | None) -> float | None:
    """The wall time of the first evaluation at or above `score`."""
    return None if score is None else next((t for t, _, e in curve if e >= score), None)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="HalfCheetah-v5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=150.0)
    p.add_argument("--actors", default="2,4,8,14", help="comma-separated actor counts, run in this order")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-dpg-scaling")
    p.add_argument("--collect", action="store_true", help="run nothing: rebuild the results from --run-root")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    try:
        counts = [int(a) for a in args.actors.split(",") if a]
    except ValueError:
        p.error(f"--actors {args.actors!r}: give whole numbers separated by commas, e.g. 2,4,8,14")
    if not counts or min(counts) < 1:
        p.error(f"--actors {args.actors!r}: every count must be at least 1")
    tag = f"dpg-scaling-{args.env.replace('/', '-')}-seed{args.seed}"
    out = RESULTS / f"{tag}-{args.budget_s:.0f}s.jsonl"
    earlier = results.read(out) if out.exists() else []  # counts not run this time keep their rows and sittings
    newest = {r["actors"]: i for i, s in enumerate(earlier) for r in s.rows}
    head = results.header(command_line("bench.dpg_scaling"), seed=args.seed,
                          speed=not (args.no_speed_index or args.collect), env=args.env, budget_s=args.budget_s,
                          settings=SETTINGS)
    if args.collect:
        head["speed_index_note"] = "not measured: --collect rebuilds the rows of runs made before"
    ran: dict[int, dict] = {}
    for n in counts:
        run_dir = args.run_root / f"{tag}-{args.budget_s:.0f}s-actors{n}"
        if not args.collect:
            print(f"=== {n} actors, {args.budget_s:.0f} s", flush=True)
            run_for(command(args.env, args.seed, n, run_dir), args.budget_s, run_dir.with_suffix(".log"))
        if (run_dir / "metrics.csv").exists():
            rows = [r for r in distrl_rows(run_dir) if r["wall_s"] <= args.budget_s + 1]
            ran[n] = row(n, rows, args.budget_s)
        sittings = [Sitting(s.header, [r for r in s.rows if newest[r["actors"]] == i and r["actors"] not in ran])
                    for i, s in enumerate(earlier)] + [Sitting(head, [ran[k] for k in sorted(ran)])]
        sittings = [s for s in sittings if s.rows]
        if sittings:  # after each count: a stopped sweep keeps what it ran
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out, "w") as f:
                for sitting in sittings:
                    results.write_sitting(f, sitting.header, sitting.rows)
    kept = {r["actors"]: r for s in results.read(out) for r in s.rows} if out.exists() else {}
    if not kept:
        print(f"no runs under {args.run_root} for {tag}: nothing to report")
        return
    reference = kept[min(kept)]["eval_at_1.0"]
    print(f"| actors | greedy at 1/4, 1/2, all of {args.budget_s:.0f} s | best | frames/s | updates/s | "
          f"time to {min(kept)} actors' final ({reference or 0:,.0f}) |")
    for n in sorted(kept):
        r = kept[n]
        marks = " / ".join("-" if r[k] is None else f"{r[k]:,.0f}" for k in ("eval_at_0.25", "eval_at_0.5", "eval_at_1.0"))
        reach = time_to(r["curve"], reference)
        print(f"| {n} | {marks} | {r['best_eval'] or 0:,.0f} | {r['frames_per_s']} | {r['updates_per_s']} | "
              f"{'-' if reach is None else f'{reach:.0f} s'} |")

    from distrl.plotting import plot_comparison
    curves = {f"{n} actors": [{k: np.array([c[i] for c in kept[n]["curve"]], dtype=float)
                               for i, k in enumerate(("wall_s", "frames", "eval_mean"))}]
              for n in sorted(kept) if kept[n]["curve"]}
    figure = plot_comparison(curves, ROOT / "bench" / "figures" / f"{tag}.png", y="eval_mean",
                             ylabel=f"greedy return ({SETTINGS['eval_episodes']} episodes)",
                             title=f"Ape-X DPG on {args.env}, seed {args.seed}, {args.budget_s:.0f} s per actor "
                                   f"count on {os.cpu_count()} cores")
    print(f"wrote {out} and {figure}")


if __name__ == "__main__":
    main()
