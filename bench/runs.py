"""Running a distrl training as a child for a wall-clock budget, and reading its run directory back:
shared by the learning benchmarks (bench/minatar.py, bench/pong.py)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_for(cmd: list[str], budget_s: float, log: Path, grace_s: float = 60.0, append: bool = False,
            stop_ray: bool = True) -> None:
    """Run `cmd` in its own process group; at the budget, SIGTERM to it (distrl stops as on Ctrl-C and
    shuts its Ray down), then SIGKILL to the group for whatever is left after `grace_s`; then, with
    `stop_ray`, `ray stop --force` (every Ray on this machine: for peers that leave theirs behind)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a" if append else "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGTERM)  # distrl stops as on Ctrl-C (SIGINT may be ignored: `cmd &`)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    if stop_ray:
        subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"], capture_output=True)


def distrl_rows(run_dir: Path) -> list[dict]:
    """metrics.csv rows, each with the latest greedy evaluation finished since the previous row."""
    with open(run_dir / "metrics.csv", newline="") as f:
        metrics = list(csv.DictReader(f))
    evals = []
    if (run_dir / "evaluations.csv").exists():
        with open(run_dir / "evaluations.csv", newline="") as f:
            evals = [(float(e["wall_s"]), float(e["eval_return_mean"])) for e in csv.DictReader(f)]
    rows, previous = [], 0.0
    for m in metrics:
        wall = float(m["wall_s"])
        done = [mean for t, mean in evals if previous < t <= wall]
        rows.append({"wall_s": wall, "frames": int(float(m["frames"])), "updates": int(float(m["updates"])),
                     "return_mean_100": number(m["episode_return_mean"]),
                     "return_mean_10": number(m.get("episode_return_mean_10", "")), "episodes": int(float(m["episodes"])),
                     "eval_mean": done[-1] if done else None})
        previous = wall
    return rows


def number(text: str) -> float | None:
    return None if text in ("", "nan") else float(text)


def earlier_results(out: Path, budget_s: float) -> tuple[dict[str, list[dict]], dict[str, dict]]:
    """Each contender's rows (without the name) and summary row in an earlier JSON-lines results file,
    so that re-running some contenders keeps the others' results: only those run for the same budget,
    since a comparison across budgets means nothing (a 300 s re-run once printed a 20-minute peer's
    best as 15.0 beside its final 4,870). Those dropped are named on stdout."""
    rows: dict[str, list[dict]] = {}
    summaries: dict[str, dict] = {}
    for line in out.read_text().splitlines() if out.exists() else []:
        row = json.loads(line)
        if row.get("summary"):
            summaries[row["contender"]] = row
        else:
            rows.setdefault(row.pop("contender"), []).append(row)
    for name in list(rows):
        earlier = summaries.get(name, {}).get("budget_s")
        if earlier != budget_s:
            print(f"{out.name}: {name}'s earlier results ran for {earlier} s, not {budget_s:.0f} s: left out "
                  "(run it again with this budget)", flush=True)
            rows.pop(name)
            summaries.pop(name, None)
    return rows, summaries
