"""Running a distrl training for a budget and reading its run directory back: as a child for a wall-clock
budget (the learning races: bench/minatar.py, bench/pong.py, ...), or in this process on distrl's Ray
runtime for a measured window (the throughput benches: bench/a3c_throughput.py, bench/ba3c_scaling.py)."""

from __future__ import annotations

import csv
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench.results import Sitting, read

ROOT = Path(__file__).resolve().parent.parent
# Every bench's results folder (bench/README.md names the files); BENCH_RESULTS=DIR puts them elsewhere,
# e.g. for trial runs.
RESULTS = Path(os.environ.get("BENCH_RESULTS") or ROOT / "bench" / "results")
# distrl's frame budget in a race on the clock: the clock ends it, not a preset's frames (2 actors made
# the Ape-X DPG presets' 1M frames of Hopper-v5 in 1,042 s on 2026-11-27)
RACE_FRAMES = 100_000_000


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
    evals = [(e["wall_s"], e["eval_mean"]) for e in evaluations(run_dir)]
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


def eval_summary(rows: list[dict], marks: dict[str, float]) -> dict:
    """distrl_rows' greedy evaluation at each mark (name -> wall seconds: the latest shown in a row at or
    before it), the best, and the run's frames, updates and their rates at its last row."""
    evals = [(r["wall_s"], r["eval_mean"]) for r in rows if r["eval_mean"] is not None]
    out = {name: ([e for t, e in evals if t <= s] or [None])[-1] for name, s in marks.items()}
    last = rows[-1] if rows else {}
    wall = last.get("wall_s") or 0.0
    return {**out, "best_eval": max((e for _, e in evals), default=None), "frames": last.get("frames"),
            "updates": last.get("updates"), "frames_per_s": round(last["frames"] / wall, 1) if wall else None,
            "updates_per_s": round(last["updates"] / wall, 1) if wall else None}


def evaluations(run_dir: Path) -> list[dict]:
    """evaluations.csv's rows (none before the first): wall_s, updates and the greedy mean, eval_mean."""
    if not (run_dir / "evaluations.csv").exists():
        return []
    with open(run_dir / "evaluations.csv", newline="") as f:
        return [{"wall_s": float(e["wall_s"]), "updates": int(float(e["updates"])),
                 "eval_mean": float(e["eval_return_mean"])} for e in csv.DictReader(f)]


def params_wall_s(curve: list[dict], updates: float) -> float | None:
    """When the learner had made `updates` updates: the minute of the parameters an evaluation scored, which
    it reports only once its episodes end (minutes later on 2 cores). Interpolated between the curve's rows;
    None past its last row."""
    for before, row in zip([None, *curve], curve):
        if row["updates"] >= updates:
            if before is None or row["updates"] == before["updates"]:
                return float(row["wall_s"])
            share = (updates - before["updates"]) / (row["updates"] - before["updates"])
            return round(before["wall_s"] + share * (row["wall_s"] - before["wall_s"]), 1)
    return None


def number(text: str) -> float | None:
    return None if text in ("", "nan") else float(text)


def command_line(module: str) -> str:
    """The command that runs this bench, as a reader types it from the repository root (a results header's
    `command`): `python -m <module> <its arguments>`."""
    return shlex.join(["python", "-m", module, *sys.argv[1:]])


def earlier_results(out: Path, budget_s: float, rerun: Iterable[str] = ()) -> list[Sitting]:
    """The sittings of an earlier results file (bench/results.py), each with the rows of the contenders
    to keep, so that re-running some contenders keeps the others' results with their own headers: a
    contender's newest sitting, unless it is in `rerun` (run again now), and only if it ran for the
    same budget, since a comparison across budgets means nothing (a 300 s re-run once printed a
    20-minute peer's best as 15.0 beside its final 4,870). Those dropped for their budget are named on
    stdout; sittings left with no row are left out."""
    if not out.exists():
        return []
    sittings = read(out)
    newest = {name: i for i, s in enumerate(sittings) for name in s.contenders()}
    rerun = set(rerun)
    kept = []
    for i, sitting in enumerate(sittings):
        names = [n for n in sitting.contenders() if newest[n] == i and n not in rerun]
        for name in list(names):
            summary = next((r for r in sitting.of(name) if r.get("summary")), {})
            earlier = summary.get("budget_s", sitting.header.get("budget_s"))
            if earlier != budget_s:
                print(f"{out.name}: {name}'s earlier results ran for {earlier} s, not {budget_s:.0f} s: left out "
                      "(run it again with this budget)", flush=True)
                names.remove(name)
        if names:
            kept.append(Sitting(sitting.header, [r for r in sitting.rows if r.get("contender") in names]))
    return kept


# ---- an architecture on distrl's Ray runtime for a measured window

class Window:
    """The driver's hook (distrl.runtime.driver.drive calls it every tick): the measured window opens once
    the run has counted `warm_frames` frames (Ray's actors started, their first calls returned), and the
    run stops (max_frames 0: the driver's loop ends after this tick, as bench/peers' hooks stop theirs)
    `seconds` and one log period after that, so that whole metrics rows cover about `seconds`; or after
    `max_wait_s` with no window (roles that keep failing: Ray restarts them and the run would go on)."""

    def __init__(self, cfg: Any, clock: Callable[[], float], seconds: float, warm_frames: float,
                 max_wait_s: float = 300.0):
        self.cfg, self.clock, self.seconds, self.warm_frames = cfg, clock, seconds, warm_frames
        self.max_wait_s = max_wait_s
        self.opened: float | None = None  # on the run's clock (metrics.csv's wall_s)

    def __call__(self, state: dict) -> None:
        now = self.clock()
        if self.opened is None:
            if state["totals"]["frames"] >= self.warm_frames:
                self.opened = now
            elif now >= self.max_wait_s:
                self.cfg.max_frames = 0
        elif now - self.opened >= self.seconds + self.cfg.log_every_s:
            self.cfg.max_frames = 0


def run_on_ray(builder: Any, seconds: float, warm_frames: float, counted: tuple[str, ...] = ()) -> dict:
    """`builder`'s run by distrl.runtime.ray.run (what `distrl train --runtime ray` runs: the driver, a Ray
    actor per role instance) in a scratch run directory, measured over a window of about `seconds`
    (Window); its rates over the window from the run's metrics.csv (window_rates). It joins the Ray this
    process started (distrl.runtime.ray.connect), else starts and stops one of its own."""
    from distrl.components.monitor import Monitor
    from distrl.runtime import ray as runtime

    with tempfile.TemporaryDirectory(prefix="distrl-bench-") as tmp:
        run_dir = Path(tmp)
        builder.cfg.run_dir = str(run_dir)
        monitor = Monitor(run_dir, live=False, tensorboard=False)
        window = Window(builder.cfg, monitor.wall_s, seconds, warm_frames)
        try:
            result = runtime.run(builder, run_dir, monitor, hook=window)
        finally:
            monitor.close()
        rows = metrics_rows(run_dir)
    return {**window_rates(rows, window.opened, counted), "frames": result["frames"], "updates": result["updates"]}


def metrics_rows(run_dir: Path) -> list[dict[str, float]]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return [{k: float(v) for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(f)]


def window_rates(rows: list[dict[str, float]], opened: float | None, counted: tuple[str, ...] = ()) -> dict:
    """Every rate column (`*_per_s`: each row's rate since the row before) time-weighted over the window,
    and the `counted` gauges (running totals such as dropped_late) as `<name>_per_s`. The window runs from
    the first row logged at or after `opened` to the last row before the stop (the final row, written
    after it, covers the roles' last calls and is left out). A run with no such window gives its rates
    from its first row to its last, with steady False (and says so on stderr)."""
    first = next((i for i, r in enumerate(rows) if opened is not None and r["wall_s"] >= opened), None)
    steady = first is not None and first + 1 < len(rows) - 1
    a, b = (first, len(rows) - 2) if steady else (0, len(rows) - 1)
    if b <= a or rows[b]["wall_s"] <= rows[a]["wall_s"]:
        raise RuntimeError(f"{len(rows)} metrics row(s): too few for any rate; raise --seconds")
    if not steady:
        print("warning: no measured window (too short, or the roles never warmed up): rates from the run's "
              "first metrics row to its last, warm-up included; raise --seconds", file=sys.stderr)
    span = list(zip(rows[a:b], rows[a + 1:b + 1]))
    window_s = rows[b]["wall_s"] - rows[a]["wall_s"]
    names = [k for k in rows[b] if k.endswith("_per_s")]
    rates = {k: sum(r.get(k, 0.0) * (r["wall_s"] - p["wall_s"]) for p, r in span) / window_s for k in names}
    rates |= {f"{k}_per_s": (rows[b].get(k, 0.0) - rows[a].get(k, 0.0)) / window_s for k in counted}
    return {**rates, "window_s": window_s, "steady": steady}
