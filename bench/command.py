"""A documented command, run as written and kept as a result: the check that a command in the docs gives
the number printed beside it (issue 56).

    python -m bench.command --out readme-halfcheetah-seed2.jsonl -- \\
        distrl train apex-dpg --env HalfCheetah-v5 --runtime ray --actors 2 --seed 2 --max-time 20m ...
    python -m bench.command --out FILE.jsonl --collect RUN_DIR --speed-index SPEED.json -- distrl train ...

It measures the speed index, runs the command (its --run-dir, or one it adds under runs/), then writes
bench/results/FILE: one sitting whose header holds the command, and rows: each metrics.csv row with the
greedy evaluation finished since the row before, then one summary row from summary.json. `--collect`
writes the file from a run already made (with the speed index measured before it, from `python -m
bench.speed > SPEED.json`). Prints the summary row; asserts nothing."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import subprocess
import sys
from pathlib import Path

from bench import results
from bench.runs import RESULTS, ROOT, distrl_rows, evaluations


def run_dir_of(command: list[str]) -> Path | None:
    return Path(command[command.index("--run-dir") + 1]) if "--run-dir" in command else None


def summary_row(run_dir: Path, contender: str) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    cfg = json.loads((run_dir / "config.json").read_text())
    periodic = [e["eval_mean"] for e in evaluations(run_dir)]
    return {"contender": contender, "summary": True, "budget_s": cfg.get("max_seconds"),
            "stopped_by": summary.get("stopped_by"), "wall_s": summary["wall_s"], "frames_at_budget": summary["frames"],
            "updates": summary["updates"], "final_eval": summary["eval_return_mean"],
            "eval_episodes": summary["eval_episodes"], "last_eval_mean": periodic[-1] if periodic else None,
            "best_eval": max(periodic, default=None), "return_at_budget": summary["final_return_mean"],
            "frames_per_s": round(summary["frames"] / summary["wall_s"], 1) if summary["wall_s"] else None,
            "rates": summary.get("rates", {})}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.command", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the result file's name in bench/results/")
    p.add_argument("--collect", type=Path, metavar="RUN_DIR", help="write the result of a run already made")
    p.add_argument("--speed-index", type=Path, metavar="JSON", help="with --collect: the index measured before it")
    p.add_argument("--note", default="", help="a line for the header: what shared the machine, and the like")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- distrl train ... (as the docs write it)")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or command[:2] != ["distrl", "train"]:
        p.error("give the documented command after --, starting `distrl train`")
    if args.collect:
        if args.speed_index is None:
            p.error("--collect needs --speed-index: the index measured before the run")
        run_dir, speed = args.collect, json.loads(args.speed_index.read_text())
    else:
        speed = None
        run_dir = run_dir_of(command)
        if run_dir is None:
            run_dir = ROOT / "runs" / Path(args.out).stem
            command += ["--run-dir", str(run_dir)]
    head = results.header(shlex.join(command), speed=speed is None and not args.collect)
    if speed is not None:
        head["speed_index"] = speed
        head.pop("speed_index_note", None)
    if not args.collect:
        done = subprocess.run([str(Path(sys.executable).parent / "distrl"), *command[1:]], cwd=ROOT)
        if done.returncode != 0:
            return done.returncode
    cfg = json.loads((run_dir / "config.json").read_text())
    head.update(preset=cfg["preset"], seed=cfg["seed"], **({"note": args.note} if args.note else {}))
    if args.collect:  # the run's start, when distrl wrote its config
        started = dt.datetime.fromtimestamp((run_dir / "config.json").stat().st_mtime, dt.timezone.utc)
        head["date"] = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    contender = f"distrl-{cfg['architecture']}"
    with open(RESULTS / args.out, "w") as f:
        results.write_sitting(f, head, [{"contender": contender, **r} for r in distrl_rows(run_dir)])
        results.write_row(f, row := summary_row(run_dir, contender))
    print(json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
