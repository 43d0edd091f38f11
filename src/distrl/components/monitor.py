"""Counters from every component turned into rates, written to metrics.csv and TensorBoard,
and shown live (rich) when stdout is a terminal."""

from __future__ import annotations

import csv
import math
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

# counter name -> rate column: the figures DESIGN.md names (frames/s, inserts/s, ...).
RATE_NAMES = {
    "actors/frames": "env_frames_per_s",
    "replay/inserts": "replay_inserts_per_s",
    "replay/samples": "replay_samples_per_s",
    "learner/updates": "learner_updates_per_s",
    "actors/param_pulls": "param_pulls_per_s",
    "learner/pushes": "grad_pushes_per_s",  # Gorila: gradients sent to the parameter server
    "learner/data_points": "data_points_per_s",  # BA3C: examples back-propagated, summed over workers
}


class Monitor:
    def __init__(self, run_dir: Path, *, live: bool | None = None, tensorboard: bool = True,
                 trackers: Sequence[Any] = ()):
        self.run_dir = Path(run_dir)
        self.trackers = list(trackers)  # what else hears of every row and evaluation (W&B, a Tune trial)
        self.console = Console(stderr=False)
        self.live_enabled = self.console.is_terminal if live is None else live
        self.returns: deque[float] = deque(maxlen=100)
        self.episodes = 0
        self._watched: tuple[str, deque[float]] | None = None
        self._start = time.perf_counter()
        self._first: tuple[float, dict[str, float]] | None = None
        self._last: tuple[float, dict[str, float]] | None = None
        self._csv_file: IO[str] | None = None
        self._csv: csv.DictWriter[str] | None = None
        self._writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter
            self._writer = SummaryWriter(str(self.run_dir / "tb"))
        self._live: Live | None = None

    def add_returns(self, returns: list[float]) -> None:
        self.returns.extend(returns)
        self.episodes += len(returns)

    def watch(self, column: str, window: int = 10) -> None:
        """One more return column in every row from the first on: the mean of the last `window` episodes
        fed to add_watched_returns (Ape-X: its lowest-epsilon env, which finishes few of them)."""
        self._watched = (column, deque(maxlen=window))

    def add_watched_returns(self, returns: list[float]) -> None:
        if self._watched is not None:
            self._watched[1].extend(returns)

    def return_mean(self, last: int = 100) -> float:
        """Mean of the last `last` (at most 100) finished training episodes: 100 as DQN's curves, 10 as
        the continuous-control curves (SB3's, and episodes of 1,000 steps)."""
        recent = list(self.returns)[-last:]
        return float(sum(recent) / len(recent)) if recent else math.nan

    def wall_s(self) -> float:
        return time.perf_counter() - self._start

    def start(self, counters: dict[str, float]) -> None:
        """The counters components begin with (restored ones on --resume): rates count from here."""
        self._first = (self.wall_s(), dict(counters))

    def log(self, counters: dict[str, float], extra: dict[str, float] | None = None) -> dict[str, float]:
        """Write one row: wall_s, frames, updates, mean return, gauges and rates since the last row."""
        now = self.wall_s()
        if self._first is None:
            self._first = (0.0, {k: 0.0 for k in counters})
        prev_t, prev = self._last or self._first
        dt = max(now - prev_t, 1e-9)
        row = {"wall_s": round(now, 3), "frames": counters.get("actors/frames", 0),
               "updates": counters.get("learner/updates", 0), "episode_return_mean": self.return_mean(),
               "episode_return_mean_10": self.return_mean(10), "episodes": self.episodes}
        if self._watched is not None:
            column, window = self._watched
            row[column] = float(sum(window) / len(window)) if window else math.nan
        row.update(extra or {})
        for key, name in RATE_NAMES.items():
            if key in counters:
                row[name] = (counters[key] - prev.get(key, 0.0)) / dt
        self._last = (now, dict(counters))
        self._write(row)
        self._show(row)
        return row

    def log_eval(self, result: dict[str, Any]) -> None:
        """An evaluation (periodic, or the final one): appended to evaluations.csv, TensorBoard and the
        tracker, by learner updates."""
        row = {"wall_s": round(self.wall_s(), 3), "updates": result.get("updates", 0),
               "eval_return_mean": result["mean"], "eval_return_std": result["std"],
               "episodes": result["episodes"], "human_normalized": result.get("human_normalized")}
        path = self.run_dir / "evaluations.csv"
        new = not path.exists()
        with open(path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        if self._writer is not None:
            self._writer.add_scalar("eval/return_mean", row["eval_return_mean"], row["updates"])
            if row["human_normalized"] is not None:
                self._writer.add_scalar("eval/human_normalized", row["human_normalized"], row["updates"])
        for tracker in self.trackers:
            tracker.log_eval(row, result.get("video"))

    def overall_rates(self) -> dict[str, float]:
        """Rates averaged over the whole run, for summary.json."""
        if self._last is None or self._first is None or self._last[0] <= self._first[0]:
            return {}
        (t0, first), (t, counters) = self._first, self._last
        return {name: (counters[key] - first.get(key, 0.0)) / (t - t0)
                for key, name in RATE_NAMES.items() if key in counters}

    def _write(self, row: dict[str, float]) -> None:
        if self._csv is None:
            path = self.run_dir / "metrics.csv"
            # A resumed run appends under the header it began with (columns added since are left out).
            self._csv_file = open(path, "a+", newline="")
            self._csv_file.seek(0)  # "a+" reads from anywhere; every write still goes to the end
            first = self._csv_file.readline()
            header = first.rstrip("\r\n").split(",") if first else None
            self._csv = csv.DictWriter(self._csv_file, fieldnames=header or list(row), extrasaction="ignore")
            if header is None:
                self._csv.writeheader()
        self._csv.writerow(row)
        assert self._csv_file is not None  # opened with the writer
        self._csv_file.flush()
        if self._writer is not None:
            step = int(row["frames"])
            for key, value in row.items():
                if key not in ("frames", "wall_s") and isinstance(value, (int, float)) and not math.isnan(value):
                    self._writer.add_scalar(key, value, step)
            self._writer.flush()
        for tracker in self.trackers:
            tracker.log(row)

    def _table(self, row: dict[str, float]) -> Table:
        table = Table(show_header=False, box=None, title=f"distrl  {self.run_dir.name}")
        for key, value in row.items():
            table.add_row(key, f"{value:,.1f}" if isinstance(value, float) else f"{value:,}")
        return table

    def _show(self, row: dict[str, float]) -> None:
        if not self.live_enabled:
            return
        if self._live is None:
            self._live = Live(self._table(row), console=self.console, refresh_per_second=4, transient=True)
            self._live.start()
        else:
            self._live.update(self._table(row))

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
        if self._csv_file is not None:
            self._csv_file.close()
        if self._writer is not None:
            self._writer.close()
        for tracker in self.trackers:
            tracker.close()

