"""A lever's ratio late in a run, without a full run (issue 59: "measure each lever alone as a before/after
ratio, in a bench that needs no full run"): each contender resumes the same checkpoint of an earlier run
with its own `--set` values, and is measured over a window once its learner is updating again.

Late in a Pong run the games are long, so the evaluator's share of the cores is far larger than in a fresh
run's first minutes, where a short bench would measure it; a resumed checkpoint puts every contender there.
The replay is not in the checkpoint: each contender refills it to replay.min_size first (about a minute
on 2 cores), then warms for `--warm-s`, then is measured for `--seconds`: the learner's updates/s and the
env frames/s from its metrics.csv, and the cores each role kept busy (bench.role_cpu's window). Then its
process group is killed (no final evaluation) and Ray stopped. Contenders alternate over `--rounds`, each
round in a fresh copy of the checkpoint.

    .venv/bin/python -m bench.resumed_window --from runs/bench-atari-pong-apex-evt8-seed1 \\
        --contender base= --contender evaluator-nice-19=ray.niceness=evaluator=19 \\
        --out bench/results/resumed-window-issue59.jsonl

A contender is NAME=KEY=VALUE[;KEY=VALUE...] (NAME= alone: the run's own values). Asserts nothing."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench import results, role_cpu
from bench.runs import ROOT, command_line, metrics_rows
from distrl.checkpoint import checkpoint_step, latest_checkpoint


def copy_checkpoint(source: Path, dest: Path) -> int:
    """The run's config and newest checkpoint, alone, in `dest` (a resumable run directory); its updates."""
    newest = latest_checkpoint(source)
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "checkpoints").mkdir(parents=True)
    shutil.copy2(source / "config.json", dest / "config.json")
    shutil.copy2(newest, dest / "checkpoints" / newest.name)
    return checkpoint_step(newest)


def measure(arch: str, source: Path, dest: Path, sets: list[str], warm_s: float, seconds: float,
            max_wait_s: float = 600.0) -> dict:
    start_updates = copy_checkpoint(source, dest)
    cmd = [sys.executable, "-m", "distrl.cli", "train", arch, "--quiet", "--resume", str(dest),
           *[x for s in sets for x in ("--set", s)]]
    log = open(dest.parent / f"{dest.name}.log", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + max_wait_s
        while not any(r.get("updates", 0) > start_updates for r in rows(dest)):  # the replay refilled
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{dest}: the learner never updated again (see {log.name})")
            time.sleep(2.0)
        time.sleep(warm_s)
        first = len(rows(dest))
        cores, busy, wall = role_cpu.window(seconds)
        measured = rows(dest)[first - 1:]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
        subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"], capture_output=True)
    a, b = measured[0], measured[-1]
    span = b["wall_s"] - a["wall_s"]
    return {"window_s": round(span, 1), "learner_updates_per_s": round((b["updates"] - a["updates"]) / span, 2),
            "env_frames_per_s": round((b["frames"] - a["frames"]) / span, 1), "machine_busy": round(busy, 3),
            "cores": {k: round(v, 3) for k, v in cores.items()}, "from_updates": start_updates}


def rows(run_dir: Path) -> list[dict[str, float]]:
    return metrics_rows(run_dir) if (run_dir / "metrics.csv").exists() else []


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from", dest="source", type=Path, required=True, help="a run directory with checkpoints")
    p.add_argument("--contender", action="append", required=True, metavar="NAME=K=V;K=V")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--warm-s", type=float, default=60.0)
    p.add_argument("--seconds", type=float, default=180.0)
    p.add_argument("--scratch", type=Path, default=ROOT / "runs" / "resumed-window")
    p.add_argument("--out", type=Path, help="append a sitting to this result file")
    args = p.parse_args()
    arch = json.loads((args.source / "config.json").read_text())["architecture"]
    contenders = {name: [s for s in rest.split(";") if s] for name, _, rest in (c.partition("=") for c in args.contender)}
    head = results.header(command_line("bench.resumed_window"), source=str(args.source), arch=arch,
                          warm_s=args.warm_s, seconds=args.seconds, contenders=contenders)
    found = []
    for k in range(args.rounds):
        for name, sets in contenders.items():
            row = {"kind": "window", "contender": name, "round": k,
                   **measure(arch, args.source, args.scratch / f"{name}-r{k}", sets, args.warm_s, args.seconds)}
            found.append(row)
            print(json.dumps(row), flush=True)
    base = found[0]["contender"]
    for name in contenders:
        mine = [r["learner_updates_per_s"] for r in found if r["contender"] == name]
        theirs = [r["learner_updates_per_s"] for r in found if r["contender"] == base]
        print(f"{name}: {sum(mine) / len(mine):.2f} updates/s, {sum(mine) / sum(theirs):.2f}x {base}")
    if args.out:
        with open(args.out, "a") as f:
            results.write_sitting(f, head, found)


if __name__ == "__main__":
    main()
