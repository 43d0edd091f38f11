"""`distrl sweep` (`distrl.sweep`): a grid or random search over config keys and seeds, run as Ray Tune
trials (runtime/ray/tune.py), each an ordinary run directory under OUT/trials; then OUT/sweep.csv and
OUT/sweep.png.

Random values are drawn here, once, from a seeded generator, and crossed with the seeds as a grid: each
drawn value runs with every seed, so the figure's band is seed noise at one value (Tune's own sampling
would draw a new value for every seed)."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from distrl import config as C
from distrl.errors import ConfigError

DISTRIBUTIONS = ("loguniform", "uniform")
SEED = "seed"


def parse_sample(spec: str) -> tuple[str, float, float]:
    """'loguniform(1e-4,1e-2)' -> ("loguniform", 1e-4, 1e-2)."""
    m = re.fullmatch(r"\s*(\w+)\(\s*([^,\s]+)\s*,\s*([^,\s]+)\s*\)\s*", spec)
    if not m or m.group(1) not in DISTRIBUTIONS:
        raise ConfigError(f"cannot read the distribution {spec!r}: give loguniform(LOW,HIGH) or uniform(LOW,HIGH), "
                          "e.g. learner.lr=loguniform(1e-4,1e-2)")
    try:
        low, high = float(m.group(2)), float(m.group(3))
    except ValueError:
        raise ConfigError(f"the bounds of {spec!r} must be numbers, e.g. loguniform(1e-4,1e-2)") from None
    if not low < high or (m.group(1) == "loguniform" and low <= 0):
        raise ConfigError(f"{spec}: need LOW < HIGH (and LOW > 0 for loguniform)")
    return m.group(1), low, high


def draw(sample: dict[str, str], samples: int, seed: int) -> dict[str, list[float]]:
    """`samples` values of each key from its distribution, from one generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    drawn = {}
    for key, spec in sample.items():
        kind, low, high = parse_sample(spec)
        values = rng.uniform(math.log(low), math.log(high), samples) if kind == "loguniform" else \
            rng.uniform(low, high, samples)
        drawn[key] = [float(f"{v:.4g}") for v in (np.exp(values) if kind == "loguniform" else values)]
    return drawn


def trial_name(config: dict[str, Any]) -> str:
    """learner.lr=0.000412,seed=1 -> 'learner.lr=0.000412-seed1': the trial's run directory."""
    parts = [f"{k}={v}" for k, v in config.items() if k != SEED] + [f"seed{config[SEED]}"]
    return re.sub(r"[^\w.=+-]", "_", "-".join(parts))


def trial(config: dict[str, Any], *, architecture: str, env: str, preset: str | None, overrides: dict[str, Any],
          trials: str) -> None:
    """One Tune trial: an inline distrl run of `config` (swept keys and the seed) over `overrides`."""
    from distrl.runtime.ray.tune import TuneReport
    from distrl.training import train

    values = {k: v for k, v in config.items() if k != SEED}
    cfg = C.build_config(architecture, env, preset=preset, overrides={
        **overrides, **values, "seed": config[SEED], "run_dir": str(Path(trials) / trial_name(config))})
    train(cfg, live=False, overwrite=True, trackers=[TuneReport()])


def check(architecture: str, env: str, preset: str | None, overrides: dict[str, Any], grid: dict[str, list]) -> None:
    """Every trial's config is valid before any starts: a typo fails here, not in sixteen trials."""
    if overrides.get("runtime", "inline") != "inline":
        raise ConfigError("a sweep's trials run inline, one Tune trial each (Tune places them on the cores or the "
                          "cluster): leave out runtime=ray")
    for key in grid:
        if key in ("runtime", "run_dir", "seed"):
            raise ConfigError(f"{key} cannot be swept: give seeds with --seeds, and leave runtime and run_dir to "
                              "the sweep")
    C.build_config(architecture, env, preset=preset, overrides=overrides)
    for key, values in grid.items():
        for value in values:
            C.build_config(architecture, env, preset=preset, overrides={**overrides, key: value})


def collect(results: list[dict], grid_keys: list[str], trials: Path) -> list[dict]:
    """One row per trial from its run directory: the swept values, the seed, where it got to and what it
    scored (summary.json where it finished; the last metrics row where ASHA stopped it or it failed)."""
    rows = []
    for result in results:
        config = result["config"]
        run_dir = trials / trial_name(config)
        row = {**{k: config[k] for k in grid_keys}, SEED: config[SEED]}
        summary_file = run_dir / "summary.json"
        if summary_file.exists():
            summary = json.loads(summary_file.read_text())
            row.update(status="done", frames=summary["frames"], updates=summary["updates"],
                       episode_return_mean=summary["final_return_mean"],
                       eval_return_mean=summary["eval_return_mean"])
        else:
            metrics = result["metrics"]
            row.update(status="error" if result["error"] else "stopped early", frames=metrics.get("frames"),
                       updates=metrics.get("updates"), episode_return_mean=metrics.get("episode_return_mean"),
                       eval_return_mean=metrics.get("eval_return_mean"))
        rows.append({**row, "run_dir": str(run_dir)})
    return sorted(rows, key=lambda r: tuple(r[k] for k in (*grid_keys, SEED)))


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def check_out(out: Path) -> None:
    """A sweep writes only into a folder of its own: not over another sweep or anything else."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file: give a folder for the sweep")
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out {out} is not empty (an earlier sweep, or files distrl did not write): give a "
                          "new folder")


def run_sweep(architecture: str, env: str, *, out: Path, grid: dict[str, list], sample: dict[str, str], samples: int,
              seeds: list[int], preset: str | None, overrides: dict[str, Any], asha: bool, address: str,
              cpus_per_trial: float, sample_seed: int) -> list[dict]:
    """The whole sweep: check, draw, run the trials on Tune, write OUT/sweep.csv and OUT/sweep.png."""
    from distrl.plotting import plot_sweep
    from distrl.runtime.ray.tune import require_tune, run_trials

    require_tune()
    if not grid and not sample:
        raise ConfigError("nothing to sweep: give --grid KEY=V1,V2,... or --sample KEY=loguniform(LOW,HIGH)")
    if set(grid) & set(sample):
        raise ConfigError(f"{', '.join(set(grid) & set(sample))}: give a key in --grid or in --sample, not both")
    if not seeds:
        raise ConfigError("--seeds needs at least one seed, e.g. --seeds 1,2")
    if samples < 1:
        raise ConfigError(f"--samples must be >= 1, got {samples}")
    check_out(out)
    grid = {**grid, **draw(sample, samples, sample_seed)}
    overrides = {"torch_threads": max(1, int(cpus_per_trial)), **overrides}  # as many threads as cores per trial
    check(architecture, env, preset, overrides, grid)
    out.mkdir(parents=True, exist_ok=True)
    trials = (out / "trials").resolve()
    about = {"architecture": architecture, "env": env, "preset": preset, "overrides": overrides, "grid": grid,
             "sampled": sample, "samples": samples, "sample_seed": sample_seed, "seeds": seeds, "asha": asha}
    (out / "sweep.json").write_text(json.dumps(about, indent=2))
    max_frames = C.build_config(architecture, env, preset=preset, overrides=overrides).max_frames
    results = run_trials(trial, {**grid, SEED: seeds}, storage=out, address=address, cpus_per_trial=cpus_per_trial,
                         fixed={"architecture": architecture, "env": env, "preset": preset, "overrides": overrides,
                                "trials": str(trials)},
                         asha_frames=(max(1, max_frames // 8), max_frames) if asha else None)
    rows = collect(results, list(grid), trials)
    write_csv(rows, out / "sweep.csv")
    plot_sweep(rows, list(grid), {k: v.startswith("loguniform") for k, v in sample.items()}, out / "sweep.png",
               title=f"{architecture} on {env}: {len(rows)} trials")
    return rows
