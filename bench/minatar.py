"""MinAtar learning race: distrl's four systems and two peers on one game, each for the same wall-clock
budget on this machine, one after another (issue 17).

    bash bench/peers/setup.sh                      # one venv for every contender (SB3, minatar, distrl)
    bench/peers/.venv/bin/python -m bench.minatar --game Breakout --seed 1      # 6 x 15 min
    bench/peers/.venv/bin/python -m bench.minatar --game Breakout --contenders distrl-apex,sb3-dqn --budget-s 300
    bench/peers/.venv/bin/python -m bench.minatar --game Breakout --collect     # rebuild results + figure only

Contenders: distrl-apex (Ray, 2 actors), distrl-a3c (Ray, 2 workers), distrl-ba3c (Ray, 2 workers),
distrl-gorila (Ray, 2 bundles), distrl-r2d2 (Ray, 2 actors), distrl-dqn (Ray, 2 actors), each with its MinAtar
preset and nothing else set but `--max-time` (the budget);
distrl-r2d2-bf16, distrl-r2d2 with `--set learner.bf16=true` (the r2d2-minatar preset's own value since
2026-11-28, kept so that its earlier rows keep their name); distrl-apex-bf16, distrl-apex with
`--set learner.bf16=true`; sb3-dqn and paper-dqn
(bench/peers/minatar_peers.py). Each runs in its own process group, started on a quiet machine; its
clock starts when the process starts (Ray start-up counts), and it is stopped at the budget. distrl's
rows are its own metrics.csv (mean return of the last 100 training episodes, every log interval) and
evaluations.csv (greedy, epsilon 0.001, in a separate evaluator process that shares the cores); the
peers pause training while they evaluate, and their clock leaves the evaluation out.

Writes bench/results/minatar-<game>-seed<S>.jsonl in bench/results.py's schema: the sittings the file held,
each with the rows of the contenders not run this time, then this call's sitting (its header: the command,
the machine, the speed index measured first; `--no-speed-index` skips it for trial runs) with one row per
contender per log interval, then one summary row per contender; and bench/figures/minatar-<game>-seed<S>.png
(return against wall time and frames, drawn with distrl.plotting). Prints figures; asserts nothing about them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from bench import results
from bench.runs import RESULTS, ROOT, command_line, distrl_rows, earlier_results, run_for

DISTRL = {"distrl-apex": "apex", "distrl-a3c": "a3c", "distrl-ba3c": "ba3c", "distrl-gorila": "gorila",
          "distrl-r2d2": "r2d2", "distrl-dqn": "dqn", "distrl-r2d2-bf16": "r2d2", "distrl-apex-bf16": "apex"}
SETTINGS = {"distrl-r2d2-bf16": ("--set", "learner.bf16=true"),  # on top of the architecture's MinAtar preset
            "distrl-apex-bf16": ("--set", "learner.bf16=true")}
PEERS = ("sb3-dqn", "paper-dqn")
CONTENDERS = (*DISTRL, *PEERS)
# The MinAtar paper's DQN at 5M frames, read off its published learning curves (issues 17 and 58).
PAPER_DQN_5M = {"Breakout": 10.0, "SpaceInvaders": 43.0, "Freeway": 50.0, "Asterix": 17.0, "Seaquest": 20.0}
GAMES = tuple(PAPER_DQN_5M)
# PPO in gymnax at 10M steps (issue 58's next goal, as the issue gives them; gymnax publishes no Seaquest)
PPO_GYMNAX_10M = {"Breakout": 28.0, "SpaceInvaders": 131.0, "Freeway": 58.0, "Asterix": 15.0}
# The matrix's marks (issue 58): each cell's returns at 5, 10 and 15 minutes.
MARKS = {"at_5m": 300.0, "at_10m": 600.0, "at_15m": 900.0}


def run_distrl(name: str, game: str, seed: int, budget_s: float, log_every_s: float, run_dir: Path,
               log: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "distrl.cli", "train", DISTRL[name], "--env", f"MinAtar/{game}-v1",
           "--runtime", "ray", "--actors", "2", "--seed", str(seed), "--max-time", f"{budget_s:g}s",
           "--run-dir", str(run_dir), "--overwrite", "--quiet", "--set", f"log_every_s={log_every_s}",
           *SETTINGS.get(name, ())]
    # the run stops itself at the budget (--max-time, as the docs' commands do), then saves and evaluates;
    # the preset's own max_frames (A3C and BA3C anneal over it) may end it first on a fast machine
    run_for(cmd, budget_s + 300, log)
    return distrl_rows(run_dir)


def run_peer(name: str, game: str, seed: int, budget_s: float, log_every_s: float, eval_every: int,
             out: Path, log: Path) -> list[dict]:
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "bench.peers.minatar_peers", "--contender", name, "--game", game,
           "--seed", str(seed), "--budget-s", str(budget_s), "--log-every-s", str(log_every_s),
           "--eval-every-frames", str(eval_every), "--out", str(out)]
    run_for(cmd, budget_s + 600, log)  # it stops itself at the budget; evaluations are off its clock
    return peer_rows(out)


def peer_rows(out: Path) -> list[dict]:
    """The peer's rows; its last one (at the budget, "final") also carries the machine and hyperparameters."""
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return [{"wall_s": r["wall_s"], "frames": r["frames"], "updates": r.get("updates"),
             "return_mean_100": r["return_mean_100"], "episodes": r.get("episodes"),
             "eval_mean": r.get("eval_mean")} for r in rows]


def time_to(rows: list[dict], target: float, key: str = "return_mean_100") -> dict | None:
    """The first row whose `key` (the training return, or eval_mean: the greedy one) reaches `target`."""
    for r in rows:
        if r.get(key) is not None and r[key] >= target:
            return {"wall_s": r["wall_s"], "frames": r["frames"]}
    return None


def at(rows: list[dict], key: str, seconds: float, by: str = "wall_s") -> float | None:
    """The latest `key` shown in a row at or before `seconds` (or another mark of `by`, e.g. frames); None
    for a run that ended before it (its last row more than a twentieth short of the mark)."""
    if not rows or rows[-1][by] < 0.95 * seconds:
        return None
    return ([r[key] for r in rows if r[by] <= seconds and r.get(key) is not None] or [None])[-1]


def summary(name: str, rows: list[dict], target: float | None) -> dict:
    """A contender's summary row: the training return (mean of the last 100 episodes) and the greedy
    evaluation at each of MARKS, the time each first reached the paper DQN's score, and the rates."""
    last = rows[-1] if rows else {}
    wall, frames, updates = last.get("wall_s"), last.get("frames"), last.get("updates")
    evals = [r["eval_mean"] for r in rows if r["eval_mean"] is not None]
    marks = {f"return_{m}": at(rows, "return_mean_100", s) for m, s in MARKS.items()}
    marks |= {f"eval_{m}": at(rows, "eval_mean", s) for m, s in MARKS.items()}
    reached = {} if target is None else {
        "time_to_paper_dqn_5m": time_to(rows, target), "eval_time_to_paper_dqn_5m": time_to(rows, target, "eval_mean")}
    return {"contender": name, "summary": True, "return_at_budget": last.get("return_mean_100"),
            "frames_at_budget": frames, "wall_s": wall,
            "frames_per_s": round(frames / wall, 1) if wall else None,
            "updates_per_s": round(updates / wall, 1) if wall and updates is not None else None,
            "last_eval_mean": evals[-1] if evals else None, **marks, "paper_dqn_5m": target, **reached}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="Breakout", help="MinAtar game: Breakout, SpaceInvaders, Freeway, Asterix, Seaquest")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=900.0, help="wall-clock seconds per contender (15 min)")
    p.add_argument("--log-every-s", type=float, default=15.0)
    p.add_argument("--eval-every-frames", type=int, default=100_000, help="peers' greedy evaluations")
    p.add_argument("--contenders", default=",".join(CONTENDERS), help=f"comma-separated subset of {CONTENDERS}")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-minatar")
    p.add_argument("--collect", action="store_true",
                   help="run nothing: rebuild the results file and the figure from what --run-root holds")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    names = [n for n in args.contenders.split(",") if n]
    unknown = [n for n in names if n not in CONTENDERS]
    if unknown:
        p.error(f"unknown contender(s) {', '.join(unknown)}: choose from {', '.join(CONTENDERS)}")

    tag = f"minatar-{args.game}-seed{args.seed}"
    out = RESULTS / f"{tag}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    head = results.header(command_line("bench.minatar"), seed=args.seed,
                          speed=not (args.no_speed_index or args.collect))
    if args.collect:
        head["speed_index_note"] = "not measured: --collect rebuilds the rows of runs made before"
    kept = earlier_results(out, args.budget_s, rerun=names)  # contenders not run this time keep their last results
    with open(out, "w") as f:
        for sitting in kept:
            results.write_sitting(f, sitting.header, sitting.rows)
        results.write_sitting(f, head)
    target = PAPER_DQN_5M.get(args.game)
    common = {"game": args.game, "budget_s": args.budget_s}
    curves_of: dict[str, list[dict]] = {name: [r for r in sitting.of(name) if not r.get("summary")]
                                        for sitting in kept for name in sitting.contenders()}
    for name in names:
        if not args.collect:
            print(f"=== {name}: {args.game}, seed {args.seed}, {args.budget_s:.0f} s", flush=True)
        run_dir, log = args.run_root / f"{tag}-{name}", args.run_root / f"{tag}-{name}.log"
        peer_out = args.run_root / f"{tag}-{name}.jsonl"
        if args.collect:
            rows = distrl_rows(run_dir) if name in DISTRL else peer_rows(peer_out)
        elif name in DISTRL:
            rows = run_distrl(name, args.game, args.seed, args.budget_s, args.log_every_s, run_dir, log)
        else:
            rows = run_peer(name, args.game, args.seed, args.budget_s, args.log_every_s, args.eval_every_frames,
                            peer_out, log)
        if name in DISTRL:  # a driver slow to answer SIGINT does not count past the budget (peers stop themselves)
            rows = [r for r in rows if r["wall_s"] <= args.budget_s]
        curves_of[name] = rows
        result = summary(name, rows, target)
        with open(out, "a") as f:
            for row in rows:
                results.write_row(f, {"contender": name, **common, **row})
            results.write_row(f, {**common, **result})
        print(json.dumps(result), flush=True)

    from distrl.plotting import plot_comparison
    curves = {name: [{"wall_s": np.array([r["wall_s"] for r in rows], dtype=float),
                      "frames": np.array([r["frames"] for r in rows], dtype=float),
                      "episode_return_mean": np.array([np.nan if r["return_mean_100"] is None else r["return_mean_100"]
                                                       for r in rows], dtype=float)}]
              for name, rows in curves_of.items() if rows}
    figure = plot_comparison(curves, ROOT / "bench" / "figures" / f"{tag}.png",
                             title=f"MinAtar {args.game}, seed {args.seed}, one contender at a time on "
                                   f"{os.cpu_count()} cores")
    print(f"wrote {out} and {figure}")


if __name__ == "__main__":
    main()
