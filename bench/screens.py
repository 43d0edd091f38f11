"""Short screens of preset values on MinAtar (issue 58): each screen one run of an architecture's MinAtar
preset with some values changed, one at a time, for the same budget; one sitting of one result file.

    python -m bench.screens --arch a3c --out bench/results/screens-a3c-minatar-issue58.jsonl \\
        --screen fw-tmax20:Freeway:rl.t_max=20 --screen bo-tmax20:Breakout:rl.t_max=20 [--budget-s 300]

A screen is NAME:GAME[:KEY=VALUE[,KEY=VALUE...]] (no values: the preset as committed). Each runs
`distrl train ARCH --env MinAtar/GAME-v1 --runtime ray --actors 2 --seed SEED --max-time BUDGET` with its
values as `--set`s, in its own process group (bench.runs.run_for). The sitting is appended to --out (a
screen file is history: nothing in it is replaced); its header holds the command and the speed index,
measured first (`--no-speed-index` skips it for trial runs), and the screens; each screen's rows are its
metrics and greedy evaluations (bench.runs.distrl_rows), then a summary with the returns at 5, 10 and 15
minutes that it reached (bench.minatar.summary). Prints each summary; asserts nothing about them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import results
from bench.minatar import GAMES, PAPER_DQN_5M, summary
from bench.runs import ROOT, command_line, distrl_rows, run_for


def parse_screen(text: str) -> tuple[str, str, list[str]]:
    """NAME:GAME[:KEY=VALUE,...] -> (name, game, ["KEY=VALUE", ...]); a clear error for anything else."""
    parts = text.split(":", 2)
    name, game = (parts + [""])[:2]
    values = [v for v in (parts[2].split(",") if len(parts) > 2 else []) if v]
    if not name or game not in GAMES or any("=" not in v for v in values):
        raise argparse.ArgumentTypeError(
            f"--screen {text!r}: expected NAME:GAME[:KEY=VALUE,...] with GAME one of {', '.join(GAMES)}")
    return name, game, values


def run_screen(arch: str, game: str, values: list[str], seed: int, budget_s: float, run_dir: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "distrl.cli", "train", arch, "--env", f"MinAtar/{game}-v1", "--runtime", "ray",
           "--actors", "2", "--seed", str(seed), "--max-time", f"{budget_s:g}s", "--run-dir", str(run_dir),
           "--overwrite", "--quiet", "--set", "log_every_s=15", *(a for v in values for a in ("--set", v))]
    run_for(cmd, budget_s + 300, run_dir.with_suffix(".log"))
    return [r for r in distrl_rows(run_dir) if r["wall_s"] <= budget_s]


def main(argv: list[str] | None = None, run=run_screen) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", required=True, help="the architecture whose MinAtar preset is screened")
    p.add_argument("--screen", action="append", type=parse_screen, required=True, metavar="NAME:GAME[:K=V,...]")
    p.add_argument("--out", type=Path, required=True, help="the result file the sitting is appended to")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=300.0, help="wall-clock seconds per screen (5 min)")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-screens")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args(argv)
    names = [n for n, _, _ in args.screen]
    if len(set(names)) < len(names):
        p.error(f"screen names must differ: {', '.join(names)}")
    head = results.header(command_line("bench.screens"), seed=args.seed, speed=not args.no_speed_index,
                          screens={n: {"game": g, "set": " ".join(v)} for n, g, v in args.screen})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        results.write_sitting(f, head)
    for name, game, values in args.screen:
        print(f"=== {name}: {args.arch} on {game}, {' '.join(values) or 'the preset as committed'}", flush=True)
        rows = run(args.arch, game, values, args.seed, args.budget_s, args.run_root / name)
        common = {"contender": name, "game": game, "set": " ".join(values), "budget_s": args.budget_s}
        result = {**summary(name, rows, PAPER_DQN_5M[game]), **common}
        with open(args.out, "a") as f:
            for row in rows:
                results.write_row(f, {**common, **row})
            results.write_row(f, result)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
