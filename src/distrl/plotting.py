"""`distrl plot`: learning curves from metrics.csv, runs of one config (differing only in seed)
drawn as their mean with a min-max band, one return panel per env (returns of different games share
no scale), plus a panel of component rates."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from distrl.components.monitor import RATE_NAMES
from distrl.errors import ConfigError

X_AXES = ("frames", "wall_s", "updates")


def read_run(run_dir: Path) -> tuple[str, str, dict[str, np.ndarray]]:
    """(env, label shared by the run's seeds, columns of metrics.csv as float arrays)."""
    metrics = run_dir / "metrics.csv"
    if not metrics.is_file():
        raise ConfigError(f"{run_dir} has no metrics.csv: give the directory of a distrl run")
    with open(metrics, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ConfigError(f"{metrics} has no rows yet: let the run log at least once")
    columns = {k: np.array([float(r[k]) if r.get(k) not in (None, "") else np.nan for r in rows]) for k in rows[0]}
    env, label = "", run_dir.name
    config = run_dir / "config.json"
    if config.is_file():
        cfg = json.loads(config.read_text())
        env = str(cfg.get("env"))
        label = f"{cfg.get('architecture')} {cfg.get('env')} {cfg.get('preset')} {cfg.get('runtime')}"
    return env, label, columns


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")  # files only: no display here or on CI
    import matplotlib.pyplot as plt
    return plt


def save(plt, fig, out: Path, title: str = "") -> Path:
    """The figure, titled, laid out and written as `out` (its folder made), then closed."""
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def draw_returns(ax, label: str, runs: list[dict[str, np.ndarray]], x: str,
                 y: str = "episode_return_mean") -> None:
    """One config's curve on `ax`: the mean over its runs (seeds) and, with several, a min-max band."""
    top = min(r[x][-1] for r in runs)  # the range every seed covers
    grid = np.linspace(0, top, 200)
    curves = np.array([np.interp(grid, r[x], r[y]) for r in runs])
    seen = ~np.isnan(curves).all(axis=0)  # before any run's first episode there is no return to average
    grid, curves = grid[seen], curves[:, seen]
    line, = ax.plot(grid, np.nanmean(curves, axis=0), label=f"{label} ({len(runs)} run{'s' * (len(runs) > 1)})")
    if len(runs) > 1:
        ax.fill_between(grid, np.nanmin(curves, axis=0), np.nanmax(curves, axis=0), color=line.get_color(), alpha=0.2)


def plot_comparison(curves: dict[str, list[dict[str, np.ndarray]]], out: Path, title: str = "",
                    y: str = "episode_return_mean", xs: tuple[str, ...] = ("wall_s", "frames"),
                    ylabel: str = "return (mean of the last 100 training episodes)") -> Path:
    """Contenders side by side (distrl's and other libraries'), return against each of `xs`: one panel
    per axis, one curve per contender (`curves[label]`: its runs, columns as arrays, NaN-free in x)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(xs), figsize=(7 * len(xs), 5))
    for ax, x in zip(np.atleast_1d(axes), xs):
        for label, runs in curves.items():
            draw_returns(ax, label, runs, x, y)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save(plt, fig, out, title)


def plot_runs(run_dirs: list[Path], out: Path, x: str = "frames") -> Path:
    if x not in X_AXES:
        raise ConfigError(f"invalid value {x!r} for --x: accepted values are {', '.join(X_AXES)}")
    plt = _pyplot()
    by_env: dict[str, dict[str, list[dict[str, np.ndarray]]]] = defaultdict(lambda: defaultdict(list))
    for run_dir in run_dirs:
        env, label, columns = read_run(Path(run_dir))
        by_env[env][label].append(columns)
    fig = plt.figure(figsize=(max(9, 6 * len(by_env)), 8))
    panels = fig.add_gridspec(2, len(by_env))
    rate_ax = fig.add_subplot(panels[1, :])
    for i, (env, groups) in enumerate(by_env.items()):
        ret_ax = fig.add_subplot(panels[0, i])
        for label, runs in groups.items():
            draw_returns(ret_ax, label, runs, x)
            for name in RATE_NAMES.values():
                if name in runs[0]:
                    rate_ax.plot(runs[0][x], runs[0][name], label=f"{name} ({label})", linewidth=1)
        ret_ax.set_title(env or "runs", fontsize=10)
        ret_ax.set_xlabel(x)
        ret_ax.set_ylabel("return (mean of the last 100 training episodes)" if i == 0 else "")
        ret_ax.legend(fontsize=8)
    rate_ax.set_ylabel("per second")
    rate_ax.set_yscale("symlog")
    rate_ax.set_xlabel(x)
    rate_ax.legend(fontsize=7, ncol=2)
    return save(plt, fig, out)


def plot_sweep(rows: list[dict], keys: list[str], log_keys: dict[str, bool], out: Path, title: str = "") -> Path:
    """A sweep's final returns against each swept value: one panel per key, the mean over the trials at a
    value (its seeds, and with several keys the other keys' values too) and their min-max band, for the
    training return (last 100 episodes) and the greedy evaluation. Trials stopped early are left out."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(keys), figsize=(7 * len(keys), 5), squeeze=False)
    done = [r for r in rows if r["status"] == "done"]
    for ax, key in zip(axes[0], keys):
        values = sorted({r[key] for r in done})
        for column, label in (("episode_return_mean", "training return (last 100 episodes)"),
                              ("eval_return_mean", "greedy evaluation")):
            scores = [np.array([r[column] for r in done if r[key] == v and r[column] is not None], float)
                      for v in values]
            kept = [(v, s) for v, s in zip(values, scores) if len(s) and not np.isnan(s).all()]
            if not kept:
                continue
            xs = [v for v, _ in kept]
            line, = ax.plot(xs, [np.nanmean(s) for _, s in kept], "o-", label=label)
            ax.fill_between(xs, [np.nanmin(s) for _, s in kept], [np.nanmax(s) for _, s in kept],
                            color=line.get_color(), alpha=0.2)
        if log_keys.get(key) or (values and min(values) > 0 and max(values) / min(values) >= 10):
            ax.set_xscale("log")
        ax.set_xlabel(key)
        ax.set_ylabel("return at the end of the trial")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save(plt, fig, out, title)
