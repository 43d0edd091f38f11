"""Sweeps on Ray Tune (the `tune` extra): a grid of trials, each an ordinary inline distrl run that reports
its metrics.csv rows to Tune, on a local Ray or the cluster at `address`; ASHA stops the weak ones early
where asked. distrl/sweeps.py builds the grid and reads the trials' run directories afterwards."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl.errors import ConfigError

METRIC = "episode_return_mean"  # what ASHA ranks trials by: the last 100 training episodes, a metrics.csv column


def require_tune() -> None:
    try:
        import ray.tune  # noqa: F401  (its own dependencies: pandas, pyarrow, fsspec)
    except ImportError:
        raise ConfigError("distrl sweep needs Ray Tune: pip install 'distrl[tune]'") from None


class TuneReport:
    """A tracker (Monitor's): each metrics.csv row goes to tune.report, with the latest evaluation's mean;
    the final evaluation is reported once more with the last row. Rows before the first finished episode
    are held back: ASHA ranks by the return, which has no value yet."""

    def __init__(self) -> None:
        self.row: dict[str, float] | None = None
        self.eval_mean: float | None = None

    def log(self, row: dict[str, float]) -> None:
        self.row = {k: v for k, v in row.items() if isinstance(v, (int, float))}
        self._report()

    def log_eval(self, row: dict[str, Any], video: str | None) -> None:
        self.eval_mean = row["eval_return_mean"]
        self._report()

    def close(self) -> None:
        pass

    def _report(self) -> None:
        from ray import tune

        if self.row is None or math.isnan(self.row.get(METRIC, math.nan)):
            return
        tune.report({**self.row, **({"eval_return_mean": self.eval_mean} if self.eval_mean is not None else {})})


def run_trials(trial: Callable[..., None], grid: dict[str, list[Any]], *, fixed: dict[str, Any], storage: Path,
               address: str, cpus_per_trial: float, asha_frames: tuple[int, int] | None) -> list[dict[str, Any]]:
    """Run trial(config, **fixed) for every combination of `grid` (a dict of value lists), cpus_per_trial
    each, as many at once as the cluster holds. asha_frames (grace, max): ASHA by frames. Returns each
    trial's config, last reported metrics and error."""
    import ray

    from distrl.runtime import protect_local_ray
    from distrl.runtime.ray.cluster import connect

    protect_local_ray(address)
    started = connect(address, math.ceil(cpus_per_trial))
    try:
        return _fit(trial, grid, fixed=fixed, storage=storage, cpus_per_trial=cpus_per_trial, asha_frames=asha_frames)
    finally:
        if started:
            ray.shutdown()  # a Ray the sweep started ends with it (a caller's own stays)


def _fit(trial: Callable[..., None], grid: dict[str, list[Any]], *, fixed: dict[str, Any], storage: Path,
         cpus_per_trial: float, asha_frames: tuple[int, int] | None) -> list[dict[str, Any]]:
    """The Tuner over the grid, on the Ray this process is connected to."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    scheduler = None
    if asha_frames is not None:
        grace, most = asha_frames
        scheduler = ASHAScheduler(time_attr="frames", max_t=most, grace_period=grace, reduction_factor=2)
    tuner = tune.Tuner(
        tune.with_resources(tune.with_parameters(trial, **fixed), {"cpu": cpus_per_trial}),
        param_space={key: tune.grid_search(values) for key, values in grid.items()},
        tune_config=tune.TuneConfig(metric=METRIC, mode="max", scheduler=scheduler),
        run_config=tune.RunConfig(name="tune", storage_path=str(storage.resolve()), verbose=1),
    )
    results = tuner.fit()
    return [{"config": r.config, "metrics": r.metrics or {}, "error": str(r.error) if r.error else None}
            for r in results]  # type: ignore[attr-defined]  # ResultGrid iterates by __getitem__, unstubbed
