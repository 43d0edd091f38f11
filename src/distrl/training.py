"""One training run from a config: the run directory, the runtime, the summary."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.checkpoint import latest_checkpoint, list_checkpoints, read_checkpoint, replay_items, replay_set
from distrl.components.monitor import Monitor
from distrl.components.tracking import WandbTracker, require_tracking
from distrl.envs.video import check_renders
from distrl.errors import ConfigError
from distrl.storage import RunStore, is_uri, store_for

RUN_FILES = ("config.json", "metrics.csv", "evaluations.csv", "eval.json", "summary.json", "chaos.json", "checkpoints",
             "tb", "videos", "wandb")


def default_run_dir(cfg: Any) -> Path:
    env = cfg.env.replace("/", "-")
    return Path("runs") / f"{cfg.architecture}-{env}-seed{cfg.seed}"


def prepare_run_dir(run_dir: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse to mix two runs in one directory, and never append to or replace a file distrl did not
    write: in a directory that is not a distrl run, any of RUN_FILES already there is the user's, and
    the run is refused before anything is written. --overwrite removes only a distrl run's own files."""
    if resume:
        _require_run(run_dir)
        return
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--run-dir {run_dir} is a file, not a directory: give another --run-dir")
    if is_run(run_dir):
        if not overwrite:
            raise ConfigError(f"run directory {run_dir} already holds a run: pass --resume {run_dir} to continue "
                              "it, --overwrite to replace it, or another --run-dir")
        for name in RUN_FILES:
            target = run_dir / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
    else:
        for name in RUN_FILES:
            target = run_dir / name
            if target.exists() or target.is_symlink():
                raise ConfigError(f"{target} exists and {run_dir} is not a distrl run, so distrl will not write "
                                  f"over it (not even with --overwrite): give another --run-dir, or move {target} "
                                  "away")
    run_dir.mkdir(parents=True, exist_ok=True)


def is_run(run_dir: Path) -> bool:
    """Whether `run_dir` is a distrl run: its config.json is one distrl wrote (a JSON object naming one of
    distrl's architectures and an env). Any other config.json is the user's file."""
    return _not_a_run(run_dir) is None


def _not_a_run(run_dir: Path) -> str | None:
    """Why `run_dir` is not a distrl run, or None when it is one."""
    path = run_dir / "config.json"
    if not path.is_file():
        return "no config.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):  # ValueError: not UTF-8 or not JSON
        return "its config.json is not one distrl wrote"
    if isinstance(data, dict) and isinstance(data.get("architecture_module"), str) and data["architecture_module"]:
        C.resolve_architecture(f"{data['architecture_module']}:{data.get('architecture')}")  # registers it
    if not (isinstance(data, dict) and data.get("architecture") in C.ARCHITECTURES
            and isinstance(data.get("env"), str)):
        return "its config.json is not one distrl wrote"
    return None


def _require_run(run_dir: Path, name: str = "") -> None:
    reason = _not_a_run(run_dir)
    if reason is not None:
        raise ConfigError(f"{name or run_dir}: no distrl run there ({reason}); give the directory of an earlier run")


def load_run_config(run_dir: Path, name: str = "") -> Any:
    """The config.json of the run in `run_dir` (`name`: what to call it in an error, where it is a URI's mirror)."""
    _require_run(run_dir, name)
    try:
        data = json.loads((run_dir / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {name or run_dir}/config.json ({exc}); give the directory of a distrl run") \
            from None
    return C.from_dict(data)


def train(cfg: Any, *, resume: bool = False, overwrite: bool = False, live: bool | None = None,
          chaos: float | None = None, announce: str | None = None, trackers: Sequence[Any] = ()) -> dict:
    """Run `cfg` to max_frames, or to its first periodic evaluation at stop_return or above. `chaos`
    (seconds, ray only): kill an actor that often, and the replay and the learner or a parameter shard
    once each (runtime/chaos.py), then report what came back.
    `announce` (the preset line) is printed once the env and the run directory passed their checks, so
    a refused run prints only its error. `trackers` hear of every metrics row and evaluation besides the
    config's own (tracking=wandb): a sweep's trial reports to Ray Tune through one."""
    if chaos is not None and (cfg.runtime != "ray" or not chaos > 0):
        raise ConfigError(f"--chaos {chaos} kills Ray worker processes every that many seconds: give a positive "
                          "number of seconds and --runtime ray")
    runtime: ModuleType  # runtime/ray or runtime/inline: the same functions
    if cfg.runtime == "ray":
        from distrl.runtime import protect_local_ray
        protect_local_ray(cfg.address)
        try:
            from distrl.runtime import ray as runtime
        except ImportError as exc:  # named: an environment from before a dependency was added lacks it
            missing = (exc.name or "").partition(".")[0]
            if missing == "ray":
                raise ConfigError("--runtime ray needs Ray, a dependency of distrl: pip install 'ray>=2.40'") from None
            raise ConfigError(f"--runtime ray needs the module {missing or exc}, a dependency of distrl that this "
                              "environment lacks: reinstall distrl to get its dependencies (pip install -e . in a checkout)") from None
    else:
        from distrl.runtime import inline as runtime

    arch = make_architecture(cfg)  # probes the env first: a bad env id fails before anything is written
    if cfg.video_every:
        check_renders(cfg.env)
    require_tracking(cfg.tracking)
    if cfg.runtime == "ray":
        runtime.check_this_machine(arch)  # as many role processes as the cores hold, before any starts
    store = store_for(cfg.run_dir) if is_uri(cfg.run_dir) else None
    if store is not None:  # the run is written in a local mirror and pushed to its URI
        run_dir = store.local
        prepare_remote(store, resume=resume, overwrite=overwrite)
    else:
        run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(cfg)
        cfg.run_dir = str(run_dir)
        prepare_run_dir(run_dir, resume=resume, overwrite=overwrite)
    if resume:
        _check_checkpoint(arch, run_dir)
    else:
        (run_dir / "config.json").write_text(C.dumps(cfg))
    if announce:
        print(announce, flush=True)
    trackers = [*trackers, *([WandbTracker(run_dir, C.to_dict(cfg), resume=resume)] if cfg.tracking == "wandb" else [])]
    monitor = Monitor(run_dir, live=live, trackers=trackers)
    hook = None
    if chaos is not None:
        from distrl.runtime.chaos import Chaos
        hook = Chaos(chaos, cfg.max_frames, seed=cfg.seed)
    try:
        try:
            pushed = partial(store.push, keep=cfg.keep_checkpoints) if store is not None else None
            result = runtime.run(arch, run_dir, monitor, resume=resume, hook=hook, saved=pushed)
        finally:
            monitor.close()
        if store is not None and result["resumed_from"]:  # named where the run is, not by its mirror
            result["resumed_from"] = store.name(result["resumed_from"])
        summary = _summary(cfg, result, monitor, run_dir, hook)
    finally:
        if store is not None:
            store.push(keep=cfg.keep_checkpoints)  # whatever the run got to, interrupted or not
    return summary


def _summary(cfg: Any, result: dict, monitor: Monitor, run_dir: Path, hook: Any) -> dict:
    evaluation = result["evaluation"] or {}
    summary = {
        "architecture": cfg.architecture, "env": cfg.env, "preset": cfg.preset, "runtime": cfg.runtime,
        "seed": cfg.seed, "actors": cfg.actors, "frames": result["frames"], "updates": result["updates"],
        "wall_s": round(monitor.wall_s(), 2), "final_return_mean": _finite(monitor.return_mean()),
        "train_episodes": monitor.episodes,
        "eval_return_mean": _finite(evaluation.get("mean", math.nan)),
        "eval_episodes": evaluation.get("episodes", 0), "eval_epsilon": evaluation.get("epsilon"),
        "eval_returns": evaluation.get("returns", []), "human_normalized": evaluation.get("human_normalized"),
        "rates": monitor.overall_rates(), "faults": result.get("faults", {}), "restores": result.get("restores", []),
        "periodic_evaluations": len(result.get("evaluations", [])),
        "stopped_at_return": result.get("reached"), "stopped_by": result.get("stopped_by"),
        "resumed_from": result["resumed_from"], "run_dir": str(cfg.run_dir),
    }
    if hook is not None:
        summary["chaos"] = hook.report()
        (run_dir / "chaos.json").write_text(json.dumps(summary["chaos"], indent=2))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def prepare_remote(store: RunStore, *, resume: bool, overwrite: bool) -> None:
    """prepare_run_dir's rules for a run directory at a URI, checked on the files there."""
    if resume:
        store.pull()
        reason = _not_a_run(store.local)
        if reason is not None:
            raise ConfigError(f"{store.uri}: no distrl run there ({reason}); give the URI of an earlier run")
        return
    names = store.names()
    if "config.json" in names:
        store.pull(checkpoints=False)
        if is_run(store.local):
            if not overwrite:
                raise ConfigError(f"run directory {store.uri} already holds a run: pass --resume {store.uri} to "
                                  "continue it, --overwrite to replace it, or another --run-dir")
            store.remove(RUN_FILES)
            shutil.rmtree(store.local)
            store.local.mkdir(parents=True)
            return
    taken = [name for name in RUN_FILES if name in names]
    if taken:
        raise ConfigError(f"{store.uri}/{taken[0]} exists and {store.uri} is not a distrl run, so distrl will not "
                          "write over it (not even with --overwrite): give another --run-dir, or move it away")


def _check_checkpoint(arch: Any, run_dir: Path) -> None:
    """Load the checkpoint to resume once before anything is written (metrics, TensorBoard), so a bad
    one is refused with the run directory untouched."""
    arch.topology().checkpoints.restore(run_dir)


def describe_resume(cfg: Any, run_dir: Path, name: str = "") -> str:
    """One line on what --resume found (in `run_dir`, called `name` where it is a URI's mirror), said before
    anything starts; no checkpoint is an error here."""
    path = latest_checkpoint(run_dir)
    older = len(list_checkpoints(run_dir)) - 1
    try:
        counters = read_checkpoint(path)["counters"]
        progress = f"{int(counters.get('frames', 0)):,} frames, {int(counters.get('episodes', 0)):,} episodes"
    except Exception:
        progress = "unreadable: loading it will say why"
    line = f"resuming {name or run_dir} from {path.name} ({progress}; {older} older checkpoint(s) kept)"
    replay = getattr(cfg, "replay", None)
    if getattr(replay, "checkpoint", False):
        saved = replay_set(run_dir)
        if saved:
            size = sum(replay_items(p) for p in saved.values())
            line += f"; replay: {len(saved)} shard(s) saved with it, {size:,} transitions"
        else:
            line += "; replay: none saved with it, so it refills before learning resumes"
    elif replay is not None:
        hint = " (replay.checkpoint=true keeps it)" if hasattr(replay, "checkpoint") else ""
        line += f"; replay: not saved{hint}, so it refills before learning resumes"
    return line


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 3)
