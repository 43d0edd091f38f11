"""distrl from Python: `train`, `resume`, `load_policy`, `evaluate`, `export` and `sweep`. The `distrl` command calls these, so the two
cannot drift; errors are `distrl.ConfigError` (and the other `distrl.DistrlError`s), which the command
prints as one line."""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distrl import __version__
from distrl import config as C
from distrl.config.fit import fitted
from distrl.errors import ConfigError
from distrl.factory import Factory, check_picklable
from distrl.storage import is_uri, local_run, store_for

EnvSpec = str | Callable[[], Any]
NetworkFactory = Callable[[Any, Any], Any]


def train(architecture: str, env: EnvSpec, *, max_frames: int | None = None, seed: int = 0,
          runtime: str = "inline", actors: int | None = None, preset: str | None = None,
          run_dir: str | Path | None = None, overwrite: bool = False, overrides: dict[str, Any] | None = None,
          network: NetworkFactory | None = None, address: str | None = None, progress: bool | None = False,
          chaos: float | None = None, **unknown: Any) -> dict[str, Any]:
    """Train `architecture` on `env` and return the run's summary (summary.json). `distrl train` calls it.

    Args:
        architecture: "dqn", "gorila", "a3c", "ba3c", "apex", "apex-dpg" or "r2d2", or "module:name" for one
            that module registers.
        env: a Gymnasium id ("CartPole-v1", "ALE/Pong-v5", "MinAtar/Breakout-v1", or "my_pkg.envs:Maze-v0"
            for an env your package registers), or a function that returns a new Gymnasium env each call (a
            module-level function or a functools.partial of one: on Ray it is pickled to the workers).
        max_frames: environment frames to train for (default: the preset's). A wall-clock budget is the
            `max_seconds` override (`--max-time` on the command line).
        seed: the run's seed; inline runs are deterministic for a seed.
        runtime: "inline" (every component in this process) or "ray" (a local Ray, or the cluster at
            `address`).
        actors: actors (Ape-X, R2D2, DQN), bundles (Gorila) or workers (A3C, BA3C) (default: the preset's).
        preset: named hyperparameters, see `distrl presets` (default: chosen from the env).
        run_dir: where config.json, metrics.csv, checkpoints/ and summary.json go (default
            `runs/ARCHITECTURE-ENV-seedSEED`), a local path or a URI (s3://, gs://). A directory holding
            another run is refused unless `overwrite`.
        overwrite: replace an earlier distrl run in run_dir (its files only; nobody else's).
        overrides: any config key, dotted as for `--set`: {"learner.lr": 1e-3, "max_seconds": 1200}.
        network: a function (observation_space, action_space) -> torch.nn.Module for the Q-network (apex,
            gorila, dqn, a3c's Q methods) or the policy/value network (a3c, ba3c), or -> (actor, critic) for
            apex-dpg, instead of distrl's own. A Q-network's forward takes a batch of observations as the env
            gives them (uint8 frames unscaled) and returns Q-values of shape (batch, actions); a policy/value
            network returns (logits of shape (batch, actions), values of shape (batch,) or (batch, 1)); a DPG
            actor returns actions of shape (batch, action size) inside the action bounds, its
            critic(observations, actions) values of shape (batch,) or (batch, 1). Checked once at start-up
            on two sampled observations.
        address: ray only: join the cluster at this address (default: start a local Ray).
        progress: a live progress display (None: when the output is a terminal).
        chaos: ray only: kill a random actor every that many seconds, and the replay and the learner (or a
            parameter shard) once each, to test recovery (chaos.json says what came back).

    Returns:
        The summary: architecture, env, preset, runtime, seed, actors, frames, updates, wall_s, stopped_by
        (max_frames, max_seconds or stop_return), final_return_mean (the mean of the last 100 training
        episodes), train_episodes, eval_return_mean, eval_episodes, eval_epsilon, eval_returns (the final
        greedy evaluation), human_normalized (Atari), rates (frames/s, updates/s), faults (restarts
        counted), restores (the state handed to each restarted role), periodic_evaluations, resumed_from,
        run_dir.
    """
    _refuse_unknown("train", unknown)
    named = {"runtime": runtime, "address": address, "actors": actors, "max_frames": max_frames, "seed": seed,
             "run_dir": None if run_dir is None else str(run_dir)}
    values = {**{k: v for k, v in named.items() if v is not None}, **(overrides or {})}
    if network is not None:
        values["net.factory"] = Factory(network)
    fit = fitted(preset or "", runtime, address or "", values)  # apex-atari-fast: sized from this machine
    cfg = C.build_config(architecture, _env(env), preset, {**(fit[0] if fit else {}), **values})
    _check_factories(cfg)
    preset_line = C.describe_preset(cfg, named=bool(preset), actors=cfg.actors if "actors" in values else None)
    if fit:
        preset_line += f"\n{fit[1]}"
    from distrl.training import train as run
    return run(cfg, overwrite=overwrite, live=progress, chaos=chaos, announce=preset_line)


def resume(run_dir: str | Path, *, overrides: dict[str, Any] | None = None, env: EnvSpec | None = None,
           network: NetworkFactory | None = None, progress: bool | None = False, chaos: float | None = None,
           **unknown: Any) -> dict[str, Any]:
    """Continue a run from its latest checkpoint, with its config.json.

    Args:
        run_dir: the run's directory, a path or a storage URI (s3://...); the run goes on there.
        overrides: config keys to change, e.g. {"max_frames": 2_000_000} to train longer.
        env: the run's env factory again, where config.json cannot import it (a lambda, a partial).
        network: the run's network factory again, for the same reason.
        progress: the live progress display, as `train` takes it.
        chaos: as `train` takes it (ray only: kill roles on a schedule, to test the recovery).

    Returns:
        The run's summary, as `train` returns it.
    """
    _refuse_unknown("resume", unknown)
    from distrl.training import describe_resume
    from distrl.training import train as run
    cfg = _load(run_dir, env, network)
    local = Path(cfg.run_dir)
    cfg.run_dir = str(run_dir)  # a URI stays one: the run goes on there
    for key, value in (overrides or {}).items():
        C.set_value(cfg, key, value)
    C.validate(cfg)
    _check_factories(cfg)
    print(describe_resume(cfg, local, str(run_dir)), flush=True)
    return run(cfg, resume=True, live=progress, chaos=chaos)


def load_policy(run_dir: str | Path, *, epsilon: float = 0.0, env: EnvSpec | None = None,
                network: NetworkFactory | None = None, **unknown: Any) -> Any:
    """The policy of a run's latest checkpoint, in this process (no Ray).

    Args:
        run_dir: the run's directory, a path or a storage URI.
        epsilon: the chance of a random action (value-based methods); 0 plays greedily.
        env: the run's env factory, where config.json cannot import it.
        network: the run's network factory, where config.json cannot import it.

    Returns:
        A policy: `act(observation)` gives the action for one observation as the env returns it (an int
        for discrete actions); `reset()` starts a new episode (an LSTM policy's state); `checkpoint` and
        `updates` say which checkpoint it holds.
    """
    _refuse_unknown("load_policy", unknown)
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigError(f"invalid value {epsilon!r} for epsilon: accepted values are numbers in [0, 1]")
    policy = _evaluator(_load(run_dir, env, network), 1).policy
    policy.epsilon = epsilon
    return policy


def evaluate(run_dir: str | Path, *, episodes: int | None = None, epsilon: float | None = None,
             video: str | Path | None = None, env: EnvSpec | None = None, network: NetworkFactory | None = None,
             checkpoint: str | Path | None = None, **unknown: Any) -> dict[str, Any]:
    """Play a run's latest policy (or an older checkpoint's) under its evaluation protocol (no-op starts on
    Atari, raw scores). `distrl eval` calls it.

    Args:
        run_dir: the run's directory, a path or a storage URI.
        episodes: episodes to play (default: the run's eval_episodes).
        epsilon: the chance of a random action (default: the run's eval_epsilon).
        video: a folder where each episode is recorded as eval-episode-I.mp4 (the `video` extra).
        env: the run's env factory, where config.json cannot import it.
        network: the run's network factory, where config.json cannot import it.
        checkpoint: a checkpoint's file name in RUN_DIR/checkpoints, or its path (default: the latest);
            a run keeps every one with keep_checkpoints=0.

    Returns:
        returns, mean, std, episodes, epsilon, human_normalized, env, checkpoint and updates (and videos:
        the files); the same is written to RUN_DIR/eval.json (an older checkpoint's to
        RUN_DIR/eval-<its file name>.json).
    """
    from distrl.checkpoint import named_checkpoint
    from distrl.envs.video import Video, check_renders
    _refuse_unknown("evaluate", unknown)
    if episodes is not None and (not isinstance(episodes, int) or episodes < 1):
        raise ConfigError(f"invalid value {episodes!r} for episodes: accepted values are whole numbers >= 1")
    if video is not None and Path(video).exists() and not Path(video).is_dir():
        raise ConfigError(f"--video {video} is a file, not a folder: give a folder for the episodes' videos")
    cfg = _load(run_dir, env, network, checkpoint)
    if video is not None:
        check_renders(str(cfg.env))
    if epsilon is not None:
        C.set_value(cfg, "eval_epsilon", epsilon)
        C.validate(cfg)
    chosen = named_checkpoint(Path(cfg.run_dir), checkpoint) if checkpoint is not None else None
    evaluator = _evaluator(cfg, episodes, chosen)
    policy = evaluator.policy
    result = {**evaluator.run(None if video is None else Video(video)), "env": str(cfg.env),
              "checkpoint": _where(run_dir, policy.checkpoint), "updates": policy.updates}
    if video is not None:
        result["videos"] = [str(Path(video) / f"eval-episode-{i}.mp4") for i in range(result["episodes"])]
    written = "eval.json" if chosen is None else f"eval-{chosen.stem}.json"
    (Path(cfg.run_dir) / written).write_text(json.dumps(result, indent=2))
    if is_uri(run_dir):
        store_for(str(run_dir)).push()
    return result


def export(run_dir: str | Path, *, format: str = "torchscript", out: str | Path | None = None,
           env: EnvSpec | None = None, network: NetworkFactory | None = None, **unknown: Any) -> dict[str, str]:
    """A run's greedy policy as a file that runs without distrl. `distrl export` calls it.

    The file takes the observation as the run's env gives it and returns the action (an LSTM policy
    also takes and returns its state). Beside it, FILE.json states the env, the wrappers that make its
    observation, the action space and how to call the file.

    Args:
        run_dir: the run's directory, a path or a storage URI.
        format: "torchscript" (`torch.jit.load`) or "onnx" (onnxruntime; the `onnx` extra exports it).
        out: the file to write (default: RUN_DIR/policy.pt or RUN_DIR/policy.onnx).
        env: the run's env factory, where config.json cannot import it.
        network: the run's network factory, where config.json cannot import it.

    Returns:
        {"file": the policy's file, "about": its FILE.json}.
    """
    from distrl.components.export import FORMATS, export_policy
    from distrl.envs import make_env
    _refuse_unknown("export", unknown)
    if format not in FORMATS:
        raise ConfigError(f"unknown export format {format!r}: choose one of {', '.join(FORMATS)}")
    if format == "onnx":
        try:
            import onnx  # noqa: F401  (torch's ONNX exporter needs both)
            import onnxscript  # noqa: F401
        except ImportError:
            raise ConfigError("--format onnx needs the onnx and onnxscript packages: pip install 'distrl[onnx]' "
                              "(or export --format torchscript, which needs only torch)") from None
    cfg = _load(run_dir, env, network)
    policy = _evaluator(cfg, 1).policy
    path = Path(out) if out is not None else Path(cfg.run_dir) / f"policy{FORMATS[format]}"
    about = {"distrl": __version__, "architecture": cfg.architecture, "checkpoint": policy.checkpoint,
             "updates": policy.updates}
    probe = make_env(cfg.env, "eval", seed=0, screen_size=cfg.screen_size)
    sidecar = export_policy(policy, probe, str(cfg.env), format, path, about)
    if out is None and is_uri(run_dir):  # beside the run, where it is
        store_for(str(run_dir)).push()
    return {"file": _where(run_dir, path), "about": _where(run_dir, sidecar)}


def sweep(architecture: str, env: str, *, out: str | Path, grid: dict[str, list] | None = None,
          sample: dict[str, str] | None = None, samples: int = 8, seeds: list[int] | tuple[int, ...] = (0,),
          max_frames: int | None = None, preset: str | None = None, overrides: dict[str, Any] | None = None,
          asha: bool = False, address: str | None = None, cpus_per_trial: float = 1.0, sample_seed: int = 0,
          **unknown: Any) -> list[dict[str, Any]]:
    """A grid or random search on Ray Tune (the `tune` extra): one inline run per trial in OUT/trials/.
    `distrl sweep` calls it.

    Args:
        architecture: as `train` takes it.
        env: a Gymnasium id.
        out: the sweep's folder: OUT/sweep.json (what ran), OUT/sweep.csv (a row per trial) and OUT/sweep.png.
        grid: values to try in every combination, e.g. {"learner.lr": [1e-4, 1e-3]}.
        sample: distributions to draw `samples` values from, once each, e.g.
            {"learner.lr": "loguniform(1e-4,1e-2)"}.
        samples: values drawn from each of `sample`'s distributions.
        seeds: every trial runs with each of these seeds.
        max_frames: each trial's frames (default: the preset's).
        preset: as `train` takes it.
        overrides: config keys every trial sets.
        asha: ASHA stops the weaker trials early (by training return, at 1/8, 1/4 and 1/2 of max_frames).
        address: a Ray cluster to run on (default: a local Ray).
        cpus_per_trial: cores each trial takes.
        sample_seed: the seed of the draws from `sample`.

    Returns:
        A row per trial: the values, the seed, status, frames, the final training return, the greedy
        evaluation and run_dir (sweep.csv's rows).
    """
    from distrl.sweeps import run_sweep
    _refuse_unknown("sweep", unknown)
    overrides = dict(overrides or {})
    if max_frames is not None:
        overrides["max_frames"] = max_frames
    return run_sweep(architecture, _env(env), out=Path(out), grid=dict(grid or {}), sample=dict(sample or {}),
                     samples=samples, seeds=list(seeds), preset=preset, overrides=overrides, asha=asha,
                     address=address or "", cpus_per_trial=cpus_per_trial, sample_seed=sample_seed)


def _evaluator(cfg: Any, episodes: int | None, checkpoint: Path | None = None) -> Any:
    """The run's evaluator, its policy holding the parameters of `checkpoint` (default: the latest)."""
    import torch

    from distrl.architectures import make_architecture
    arch = make_architecture(cfg)
    with torch.random.fork_rng(devices=[]):  # restoring a learner sets the RNG; the caller's stays as it was
        params, info = arch.policy_params(Path(cfg.run_dir), *([checkpoint] if checkpoint is not None else []))
    evaluator = arch.make_evaluator(episodes)
    evaluator.net.load_state_dict(params)
    evaluator.policy.checkpoint, evaluator.policy.updates = info.get("checkpoint"), info.get("updates")
    return evaluator


def _env(env: EnvSpec) -> str:
    if isinstance(env, str):
        return env
    if callable(env):
        return Factory(env)
    raise ConfigError(f"env {env!r} is neither a Gymnasium id nor a function that makes an env: give e.g. "
                      "'CartPole-v1' or a module-level function returning a gymnasium.Env")


def _load(run_dir: str | Path, env: EnvSpec | None, network: NetworkFactory | None,
          checkpoint: str | Path | None = None) -> Any:
    """The run's config, its run_dir where to read it on this host (a URI's local mirror, with `checkpoint`
    pulled too where it is a file name)."""
    from distrl.training import load_run_config
    local = local_run(run_dir, named=Path(checkpoint).name if checkpoint is not None else None)
    cfg = load_run_config(local, str(run_dir))
    cfg.run_dir = str(local)
    if env is not None:
        cfg.env = _env(env)
    if network is not None:
        cfg.net.factory = Factory(network)
    return cfg


def _where(run_dir: str | Path, path: Any) -> str:
    """A file of the run named where the run is: a URI's, not its local mirror's."""
    return store_for(str(run_dir)).name(path) if is_uri(run_dir) else str(path)


def _check_factories(cfg: Any) -> None:
    """On Ray the factories travel to the workers: refuse one that cannot, before anything starts."""
    if cfg.runtime == "ray":
        check_picklable(cfg.env, "env")
        check_picklable(cfg.net.factory, "network")


def _refuse_unknown(function: str, unknown: dict[str, Any]) -> None:
    """A misspelt keyword is a ConfigError naming the nearest one, as a misspelt config key is."""
    if not unknown:
        return
    accepted = [p for p in inspect.signature(globals()[function]).parameters if p != "unknown"]
    name = next(iter(unknown))
    near = difflib.get_close_matches(name, accepted, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    raise ConfigError(f"distrl.{function}() got an unknown keyword {name!r}: {hint}its keywords are "
                      f"{', '.join(accepted)}; config keys go in overrides={{'learner.lr': 1e-3}}")
