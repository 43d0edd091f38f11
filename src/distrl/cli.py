"""`distrl train | eval | export | plot | sweep | presets`: user errors end as one line on stderr and exit code 2, no traceback."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import NoReturn

from distrl import __version__
from distrl import config as C
from distrl.errors import DistrlError

EXIT_USER_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse prints usage + message; we print one line
        raise DistrlError(f"{message} (see `{self.prog} --help`)")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--set expects key=value, got {text!r}")
    return key.strip(), value.strip()


def _duration(text: str) -> float:
    """Seconds from "1200", "90s", "20m", "1.5h" or "1h30m"."""
    parts = re.fullmatch(r"\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*(?:(\d+(?:\.\d+)?)s?)?\s*", text)
    if not text.strip() or parts is None or not any(parts.groups()):
        raise argparse.ArgumentTypeError(f"expects a duration such as 1200, 90s, 20m or 1h30m, got {text!r}")
    hours, minutes, seconds = (float(g or 0) for g in parts.groups())
    if hours * 3600 + minutes * 60 + seconds <= 0:
        raise argparse.ArgumentTypeError(f"expects a duration above 0, got {text!r}")
    return hours * 3600 + minutes * 60 + seconds


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="distrl", description="Distributed deep RL: DQN, Gorila, A3C, BA3C, Ape-X, Ape-X DPG, R2D2.")
    parser.add_argument("--version", action="version", version=f"distrl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    train = sub.add_parser("train", help="train an agent")
    train.add_argument("architecture", help=f"one of: {', '.join(C.ARCHITECTURES)}, or module:name for one that "
                                            "module registers")
    train.add_argument("--env", help="Gymnasium id, e.g. CartPole-v1 or ALE/Pong-v5")
    train.add_argument("--preset", help="named hyperparameters (see `distrl presets`); default by env")
    train.add_argument("--runtime", help="inline (one process) or ray")
    train.add_argument("--address", help="ray: join the cluster at this address (default: start a local one)")
    train.add_argument("--actors", type=int, help="number of actors")
    train.add_argument("--max-frames", type=int, help="stop after this many environment frames")
    train.add_argument("--max-time", type=_duration, metavar="DURATION", dest="max_seconds",
                       help="stop training after this wall-clock time, e.g. 20m or 1h30m (then save and "
                            "evaluate as at --max-frames; a resumed run gets its own)")
    train.add_argument("--stop-return", type=float, metavar="R",
                       help="stop sooner, at the first periodic evaluation whose mean return is at least R")
    train.add_argument("--seed", type=int, help="random seed")
    train.add_argument("--run-dir", help="where config, metrics, checkpoints and summary go")
    train.add_argument("--set", dest="overrides", action="append", type=_key_value, default=[],
                       metavar="KEY=VALUE", help="override any config key, e.g. learner.lr=1e-4")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    train.add_argument("--overwrite", action="store_true", help="replace a run already in --run-dir")
    train.add_argument("--quiet", action="store_true", help="no live progress display")
    train.add_argument("--chaos", type=float, metavar="SECONDS",
                       help="ray: SIGKILL a random actor every SECONDS, the replay and the learner (or a "
                            "parameter shard) once, and check what restarts; report in chaos.json")
    ev = sub.add_parser("eval", help="evaluate a run's latest checkpoint; writes RUN_DIR/eval.json")
    ev.add_argument("run_dir", metavar="RUN_DIR")
    ev.add_argument("--checkpoint", metavar="FILE", help="an older checkpoint of the run (its file name in "
                    "RUN_DIR/checkpoints); writes RUN_DIR/eval-<its name>.json")
    ev.add_argument("--episodes", type=int, help="episodes to run (default: the run's eval_episodes)")
    ev.add_argument("--epsilon", type=float, help="exploration during evaluation (default: the run's, 0.001)")
    ev.add_argument("--video", metavar="DIR", help="record every episode as DIR/eval-episode-I.mp4 (the video extra)")
    ex = sub.add_parser("export", help="the greedy policy as a TorchScript or ONNX file that runs without distrl")
    ex.add_argument("run_dir", metavar="RUN_DIR")
    ex.add_argument("--format", default="torchscript", help="torchscript (needs only torch) or onnx (onnxruntime)")
    ex.add_argument("--out", help="file to write (default RUN_DIR/policy.pt or RUN_DIR/policy.onnx)")
    plot = sub.add_parser("plot", help="learning curves and rates of one or more runs, as a PNG")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    plot.add_argument("--out", default="curves.png", help="PNG file to write (default curves.png)")
    plot.add_argument("--x", default="frames", help="x axis: frames, wall_s or updates")
    sw = sub.add_parser("sweep", help="a grid or random search over config keys and seeds on Ray Tune, one run "
                                      "per trial; OUT/sweep.csv and OUT/sweep.png")
    sw.add_argument("architecture", help=f"one of: {', '.join(C.ARCHITECTURES)}")
    sw.add_argument("--env", required=True, help="Gymnasium id, e.g. MinAtar/Breakout-v1")
    sw.add_argument("--out", required=True, help="a new folder for the trials' runs, sweep.csv and sweep.png")
    sw.add_argument("--grid", action="append", type=_key_value, default=[], metavar="KEY=V1,V2,...",
                    help="values to try (separate them with ; where a value holds commas: net.hidden=64,64;128,128)")
    sw.add_argument("--sample", action="append", type=_key_value, default=[], metavar="KEY=DIST",
                    help="a distribution to draw --samples values from: loguniform(LOW,HIGH) or uniform(LOW,HIGH)")
    sw.add_argument("--samples", type=int, default=8, help="values drawn from each --sample (default 8)")
    sw.add_argument("--sample-seed", type=int, default=0, help="the seed of those draws (default 0)")
    sw.add_argument("--seeds", default="0", help="each trial's seeds, e.g. 1,2 (default 0)")
    sw.add_argument("--preset", help="named hyperparameters (see `distrl presets`); default by env")
    sw.add_argument("--max-frames", type=int, help="each trial's frames")
    sw.add_argument("--set", dest="overrides", action="append", type=_key_value, default=[], metavar="KEY=VALUE",
                    help="a config key every trial shares")
    sw.add_argument("--asha", action="store_true", help="stop weaker trials early (ASHA, by training return)")
    sw.add_argument("--address", help="join the Ray cluster at this address (default: a local Ray)")
    sw.add_argument("--cpus-per-trial", type=float, default=1.0, help="cores each trial holds (default 1)")
    sub.add_parser("presets", help="list presets and their sources")
    return parser


def cmd_train(args: argparse.Namespace) -> int:
    from distrl import api
    from distrl.training import load_run_config

    live = False if args.quiet else None
    overrides = dict(args.overrides)
    if args.stop_return is not None:  # a plain override, for a new run and a resumed one alike
        overrides["stop_return"] = args.stop_return
    if args.max_seconds is not None and not args.resume:
        overrides["max_seconds"] = args.max_seconds
    if args.resume:
        saved = load_run_config(Path(args.resume)).architecture
        if args.architecture.rpartition(":")[2] != saved:
            raise DistrlError(f"{args.resume} holds an {saved!r} run, not {args.architecture!r}: "
                              f"use `distrl train {saved} --resume {args.resume}`")
        for flag in ("runtime", "address", "actors", "max_frames", "max_seconds", "seed", "run_dir"):
            if getattr(args, flag) is not None:
                overrides[flag] = getattr(args, flag)
        summary = api.resume(args.resume, overrides=overrides, progress=live, chaos=args.chaos)
    else:
        if not args.env:
            raise DistrlError("missing --env: give a Gymnasium id such as CartPole-v1 or ALE/Pong-v5")
        summary = api.train(args.architecture, args.env, max_frames=args.max_frames,
                            seed=0 if args.seed is None else args.seed, runtime=args.runtime or "inline",
                            actors=args.actors, preset=args.preset, run_dir=args.run_dir, overwrite=args.overwrite,
                            overrides=overrides, address=args.address, progress=live, chaos=args.chaos)
    if summary.get("resumed_from"):
        print(f"resumed from {summary['resumed_from']}")
    _print_summary(summary)
    return 0


def _print_summary(summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="distrl summary", show_header=False)
    for key in ("architecture", "env", "preset", "runtime", "seed", "actors", "frames", "updates", "wall_s",
                "stopped_by", "final_return_mean", "eval_return_mean", "eval_episodes", "human_normalized", "run_dir"):
        table.add_row(key, str(summary.get(key)))
    for key, value in summary.get("rates", {}).items():
        table.add_row(key, f"{value:,.1f}")
    if "chaos" in summary:
        chaos = summary["chaos"]
        table.add_row("chaos kills", ", ".join(f"{k} {n}" for k, n in chaos["kills"].items()) or "none")
        for r in chaos["restores"]:
            table.add_row(f"chaos {r['kind']} restore", f"{Path(r['path'] or '-').name} exact={r['exact']}")
    Console().print(table)


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from distrl import api

    result = api.evaluate(args.run_dir, episodes=args.episodes, epsilon=args.epsilon, video=args.video,
                          checkpoint=args.checkpoint)
    table = Table(title=f"distrl eval  {args.run_dir}", show_header=False)
    for key in ("env", "checkpoint", "updates", "episodes", "epsilon", "mean", "std", "human_normalized",
                *(["videos"] if args.video else [])):
        table.add_row(key, str(result.get(key)))
    Console().print(table)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from distrl import api

    written = api.export(args.run_dir, format=args.format, out=args.out)
    print(f"wrote {written['file']} (the policy) and {written['about']} (its observation, action and usage)")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from distrl.plotting import plot_runs
    from distrl.storage import local_run

    print(plot_runs([local_run(d, checkpoints=False) for d in args.run_dirs], Path(args.out), args.x))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from distrl import api

    grid = {key: [typed(v) for v in values.split(";" if ";" in values else ",") if v] for key, values in args.grid}
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s]
    except ValueError:
        raise DistrlError(f"--seeds {args.seeds!r}: give whole numbers separated by commas, e.g. 1,2") from None
    rows = api.sweep(args.architecture, args.env, out=args.out, grid=grid, sample=dict(args.sample),
                     samples=args.samples, seeds=seeds, max_frames=args.max_frames, preset=args.preset,
                     overrides=dict(args.overrides), asha=args.asha, address=args.address,
                     cpus_per_trial=args.cpus_per_trial, sample_seed=args.sample_seed)
    table = Table(title=f"distrl sweep  {args.out}")
    columns = [c for c in rows[0] if c != "run_dir"]
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(f"{row[c]:,.4g}" if isinstance(row[c], float) else str(row[c]) for c in columns))
    Console().print(table)
    print(f"wrote {Path(args.out) / 'sweep.csv'} and {Path(args.out) / 'sweep.png'}")
    return 0


def typed(text: str) -> int | float | str:
    """A grid value as a number where it reads as one (sorted and plotted as numbers), else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def cmd_presets(_: argparse.Namespace) -> int:
    for name, (arch, source, values) in C.PRESETS.items():
        print(f"{name:18s} {arch:8s} {source}")
        for key, value in values.items():
            print(f"{'':28s}{key} = {value}")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    # SIGTERM (kill, Slurm, Kubernetes, a benchmark's budget) stops a run as Ctrl-C does. SIGINT alone
    # is not enough: a shell starts background jobs (`distrl train ... &` in a script) with it ignored.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        args = build_parser().parse_args(argv)
        return {"train": cmd_train, "eval": cmd_eval, "export": cmd_export, "plot": cmd_plot, "sweep": cmd_sweep,
                "presets": cmd_presets}[args.command](args)
    except DistrlError as exc:
        print(f"distrl: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("distrl: interrupted; the latest checkpoint is in the run directory (continue with --resume)",
              file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
