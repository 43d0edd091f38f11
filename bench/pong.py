"""Atari for a wall-clock budget on whatever machine this is: Ape-X on Pong by default (issue 18).

    .venv/bin/python -m bench.pong                              # ALE/Pong-v5, 20 minutes, seed 1
    .venv/bin/python -m bench.pong --budget-s 2400 --resume     # the same run on, to 40 minutes in all
    .venv/bin/python -m bench.pong --collect                    # rebuild the curve and the figure only
    .venv/bin/python -m bench.pong --arch a3c --budget-s 600    # the other systems, with their papers' values
    .venv/bin/python -m bench.pong --arch r2d2 --budget-s 600   # R2D2 with its paper's values (issue 36)
    .venv/bin/python -m bench.pong --eval-after 2000            # no evaluator beside training (below)

It looks at the machine (cores, a CUDA GPU) and picks the actor count, envs per actor, replay shards,
the learner's device and batch (distrl.config.fit.atari_plan, which `--preset apex-atari-fast` applies
in distrl itself), then runs `distrl train apex --preset apex-atari-fast` on Ray
(`--arch a3c|ba3c|gorila|r2d2`: `<arch>-atari`, the paper's values, but Gorila's `gorila-atari-small`,
with `plan_others`' worker counts)
with those values as `--set` overrides, in its own process group, and stops it with SIGTERM at the
budget (distrl saves a checkpoint where it stopped, for --resume). The clock starts when this script
starts (after the machine's speed index, bench/speed.py, about 10 s; `--no-speed-index` skips it for trial
runs), so Ray's start-up counts. Greedy evaluations (no-op starts, 8 episodes, epsilon 0.001)
run in distrl's separate evaluator process every 1,000 learner updates (for the other systems, the count
of about a minute, `minute_of_progress`) or as soon as the previous one finished, so acting never pauses
for them. With `--eval-after N` no evaluator runs beside training: the run keeps a checkpoint every N
updates, and after the budget each is evaluated alike (two at a time on 2 cores), placed at the minute the
learner had its parameters, as a peer whose clock leaves its evaluations out (bench/peers) is timed.
A GPU's utilisation is read with nvidia-smi every 5 s;
`--role-cpu-at MIN` takes bench.role_cpu's window (the cores each of distrl's roles kept busy) that many
minutes into the run, into the summary's role_cpu.

Writes, in the run directory: bench.json (the plan and each segment's start, end, command and speed index),
curve.csv (wall_s from this script's start, frames, updates, training return, the evaluation finished in the
interval, rates), evals.csv (each evaluation at the time it finished, and params_wall_s: when the learner
had the parameters it scored), gpu.csv and bench-summary.json; the
result bench/results/atari-<game>[-<arch>]-<machine>[-<tag>]-seed<S>.jsonl in bench/results.py's schema (one
sitting: its header holds the first segment's command and speed index, the game, the plan and the machine
with its label; rows of "kind" curve, eval, then one summary), and the figure
bench/figures/atari-<game>[-<arch>]-<machine>[-<tag>]-seed<S>.png (machine: gpu or cpu<N>; `--tag` names a
variant, so that its files do not overwrite the plan's). Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from bench import results as R
from bench import role_cpu
from bench.machine import commit, cpu_model
from bench.runs import ROOT, command_line, number, params_wall_s, run_for
from distrl.checkpoint import checkpoint_step, list_checkpoints
from distrl.config.fit import Machine, atari_plan
from distrl.nets.precision import has_bf16_units

CURVE = ("wall_s", "frames", "updates", "train_return", "eval_return", "env_frames_per_s",
         "learner_updates_per_s", "replay_inserts_per_s", "replay_samples_per_s")


def gpu_present() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


# Gorila's paper values are sized for 100 bundles over days (50,000 transitions before a bundle learns, epsilon
# over 1M global updates, targets every 60,000): its small-machine preset says what it changes and why.
PRESETS = {"apex": "apex-atari-fast", "a3c": "a3c-atari", "ba3c": "ba3c-atari", "gorila": "gorila-atari-small",
           "r2d2": "r2d2-atari"}
# Every system is evaluated alike here: the Ape-X protocol, 8 episodes, about once a minute (Ape-X's 1,000 learner
# updates took 69 s on 2 cores), so the evaluator takes about the same share of the cores in each.
SAME_EVALUATION = {"eval_protocol": "apex", "eval_episodes": 8, "eval_every": 1000}


def minute_of_progress(arch: str, workers: int) -> int:
    """About a minute of `arch`'s own progress counter, at the rates measured on Pong: each system counts
    another thing (1,000 of them took A3C 7 s and BA3C 10 minutes), and an evaluation every few seconds
    would take a core of two from learning. Gorila: 16.95 global updates/s from 2 bundles on 2 cores
    (bench/results/gorila-pong-rates-cpu2-issue59.jsonl), so 500 a bundle; A3C: 29.5 pushes/s a worker
    (atari-pong-a3c-gpu-seed1.jsonl, 5 workers), so 1,500 a worker; BA3C: 1.7 rounds/s
    (atari-pong-ba3c-gpu-seed1.jsonl), which a round's wait for 90% of the workers keeps from growing with
    them, so 100."""
    return {"gorila": 500 * workers, "a3c": 1500 * workers, "ba3c": 100}.get(arch, SAME_EVALUATION["eval_every"])


def plan_others(arch: str, cores: int, game: str = "ALE/Pong-v5") -> tuple[dict[str, object], str]:
    """The worker counts issue 18 asks for beside Ape-X: A3C and BA3C with 16 workers (the papers' A3C
    count; one per core on fewer cores), Gorila with as many bundles as the cores leave beside its
    parameter-server shards (4 from 12 cores, else 1) and the evaluator, and at least 2 (on 2 cores one
    bundle left 0.7 of a core idle: a bundle's actor waits on its own learner); R2D2 (issue 36) in Ape-X's
    layout; every other value is the preset's, but BA3C's Adam epsilon on Pong (below)."""
    if arch == "gorila":
        shards = 4 if cores >= 12 else 1
        bundles = max(2, cores - shards - 2)
        return ({"actors": bundles, "ps.shards": shards, **SAME_EVALUATION,
                 "eval_every": minute_of_progress(arch, bundles)},
                f"{cores} cores: {bundles} Gorila bundles (actor, replay, learner each), {shards} shard(s), "
                "the evaluator")
    if arch == "r2d2":
        # Ape-X's layout without its GPU shares (R2D2's actors keep their LSTM states on the CPU): 8 envs an
        # actor in one batched forward pass, LZ4 sequences (121 stacked frames each, 3.4 MB raw).
        shards = 2 if cores >= 12 else 1
        actors = max(1, cores - shards - 2)
        return ({"actors": actors, "replay.shards": shards, "actor.envs_per_actor": 8, "replay.codec": "lz4",
                 **SAME_EVALUATION},
                f"{cores} cores: {actors} R2D2 actors x 8 envs, {shards} replay shard(s) of LZ4 sequences, the "
                "learner (on the GPU where there is one), the evaluator; every other value the paper's")
    workers = min(16, cores)
    plan: dict[str, object] = {"actors": workers, "torch_threads": 1, **SAME_EVALUATION,
                               "eval_every": minute_of_progress(arch, workers)}
    how = "one store in shared memory" if arch == "a3c" else "sync 0.9 over 4 parameter servers"
    why = f"{cores} cores: {workers} {arch.upper()} workers with {PRESETS[arch]}'s values ({how})"
    if arch == "ba3c" and "pong" in game.lower():
        # Adamski et al. 2018, section 2.4: epsilon 1e-8 (their table's) "made training for Atari Pong slower", their
        # Pong results used 1e-3, and "for smaller effective batch sizes" (2 workers x 32 here) 1e-8 did not help.
        plan["learner.eps"] = 1e-3
        why += ", Adam epsilon 1e-3 (the paper's for Pong)"
    return plan, why


AFTER_EVALS = "after-evals.csv"


def after_the_run(every: int) -> dict[str, object]:
    """The overrides of a run evaluated after it ends (--eval-after): no evaluator process beside training
    (on 2 cores it took 0.59 of them late in a run, and 1.33x the learner's updates/s without it:
    bench/results/resumed-window-issue59.jsonl), and every checkpoint kept for the evaluations."""
    return {"eval_episodes": 0, "keep_checkpoints": 0, "checkpoint_every": every}


def evaluate_after(run_dir: Path, workers: int) -> list[dict]:
    """Each kept checkpoint not yet evaluated, under the same protocol as the evaluator's (8 episodes, the
    Ape-X protocol): `distrl eval --checkpoint` in `workers` processes of one torch thread at a time,
    appended to AFTER_EVALS in the order they finish. Returns every row of AFTER_EVALS."""
    path = run_dir / AFTER_EVALS
    done = {r["checkpoint"] for r in read_csv(path)}
    todo = [c for c in list_checkpoints(run_dir) if c.name not in done]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    episodes = str(SAME_EVALUATION["eval_episodes"])
    running: list[tuple[Path, subprocess.Popen]] = []
    with open(path, "a", newline="") as f:
        out = csv.writer(f)
        if f.tell() == 0:
            out.writerow(["checkpoint", "updates", "eval_return_mean", "eval_return_std", "episodes"])
        while todo or running:
            while todo and len(running) < workers:
                ckpt = todo.pop(0)
                running.append((ckpt, subprocess.Popen(
                    [sys.executable, "-m", "distrl.cli", "eval", str(run_dir), "--checkpoint", ckpt.name,
                     "--episodes", episodes], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
            ckpt, proc = running.pop(0)
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"distrl eval --checkpoint {ckpt.name} failed: {err.decode()[-500:]}")
            result = json.loads((run_dir / f"eval-{ckpt.stem}.json").read_text())
            out.writerow([ckpt.name, result["updates"], result["mean"], result["std"], result["episodes"]])
            f.flush()
            print(f"after the run: {ckpt.name} scored {result['mean']:.2f}", flush=True)
    return read_csv(path)


def after_points(curve: list[dict], rows: list[dict], stops: dict[int, float] | None = None) -> list[dict]:
    """Evaluations made after the run (AFTER_EVALS rows), each placed where the learner had its checkpoint's
    parameters, with the frames of the curve's row before that: the run had no evaluation to wait for.
    A checkpoint saved at a segment's stop (`stops`: its updates, and where its segment ended) sits at
    that end, the latest its parameters can be: past its segment's last row, and before the next
    segment's restart and replay refill. Without `stops`, the last segment's stop is left out."""
    points = []
    for r in rows:
        updates = int(float(r["updates"]))
        if (t := (stops or {}).get(updates)) is None:
            t = params_wall_s(curve, updates)
        if t is not None:
            frames = max((c["frames"] for c in curve if c["wall_s"] <= t), default=0)
            points.append({"wall_s": t, "frames": frames, "updates": updates,
                           "eval_return": float(r["eval_return_mean"]), "params_wall_s": t})
    return sorted(points, key=lambda p: p["wall_s"])


def segment_s(segment: dict) -> float:
    """A segment's length on this script's clock; 0 for one that never recorded its end."""
    return segment.get("ended", segment["started"]) - segment["started"]


def segment_ends(meta: dict) -> list[float]:
    """Where each segment ended on this script's clock (the time between segments left out, as in
    `offsets`)."""
    out, before = [], 0.0
    for seg in meta["segments"]:
        before += segment_s(seg)
        out.append(round(before, 1))
    return out


def segment_stops(run_dir: Path, meta: dict) -> dict[int, float]:
    """The checkpoint each segment saved at its stop, by its updates, and where that segment ended: the
    newest checkpoint written while the segment ran (by the file's time; its updates alone do not say,
    since a resumed learner's first rows may count a few updates fewer than its checkpoint's name)."""
    written = [(c.stat().st_mtime, checkpoint_step(c)) for c in list_checkpoints(run_dir)]
    out = {}
    for seg, end in zip(meta["segments"], segment_ends(meta)):
        mine = [(t, updates) for t, updates in written if seg["started"] <= t <= seg.get("ended", seg["started"])]
        if mine:
            out[max(mine)[1]] = end
    return out


def run_name(game: str, arch: str) -> str:
    """pong for ALE/Pong-v5 with Ape-X, pong-a3c with A3C: Ape-X's files keep their first names, without the arch."""
    short = game.split("/")[-1].removesuffix("-v5").lower()
    return short if arch == "apex" else f"{short}-{arch}"


def result_name(meta: dict) -> str:
    """The result's and the figure's name, from the run's own bench.json (a resumed or collected run may be
    another game than --game's default)."""
    tag = f"-{meta['tag']}" if meta.get("tag") else ""
    return f"atari-{run_name(meta['game'], meta.get('arch', 'apex'))}-{meta['machine']}{tag}-seed{meta['seed']}"


def watch_gpu(path: Path, t0: float, stop: threading.Event) -> None:
    """nvidia-smi's utilisation and memory every 5 s, by wall time since `t0`."""
    with open(path, "a", newline="") as f:
        out = csv.writer(f)
        if f.tell() == 0:
            out.writerow(["wall_s", "gpu_util_pct", "gpu_mem_mib"])
        while not stop.wait(5.0):
            try:
                line = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used",
                                       "--format=csv,noheader,nounits"], capture_output=True, text=True,
                                      timeout=10).stdout.splitlines()[0]
            except (OSError, subprocess.SubprocessError, IndexError):
                continue
            util, mem = (x.strip() for x in line.split(","))
            out.writerow([round(time.time() - t0, 1), util, mem])
            f.flush()


def read_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def split_segments(rows: list[dict]) -> list[list[dict]]:
    """distrl's clock restarts at 0 on --resume while its CSVs are appended: a segment ends where wall_s drops."""
    segments: list[list[dict]] = []
    last = float("inf")
    for r in rows:
        wall = float(r["wall_s"])
        if wall < last:
            segments.append([])
        segments[-1].append(r)
        last = wall
    return segments


def watch_start(metrics: Path, rows_before: int, segment: dict, stop: threading.Event) -> None:
    """Where distrl's clock starts on this machine's: now minus the wall_s of the segment's first row."""
    while not stop.wait(0.5):
        rows = read_csv(metrics)
        if len(rows) > rows_before:
            segment["monitor_start"] = time.time() - float(rows[rows_before]["wall_s"])
            return


def watch_roles(segment: dict, at_s: float, seconds: float, stop: threading.Event) -> None:
    """bench.role_cpu's window `at_s` into the segment, kept in it where the run outlived the window."""
    if stop.wait(max(0.0, segment["started"] + at_s - time.time())):
        return
    roles, busy, wall = role_cpu.window(seconds)
    if not stop.is_set():
        segment["role_cpu"] = {"at_s": round(time.time() - wall - segment["started"], 1), "window_s": round(wall, 1),
                               "machine_busy": round(busy, 3), "cores": {k: round(v, 3) for k, v in roles.items()}}


def offsets(meta: dict) -> list[float]:
    """Where each segment's distrl clock starts on this script's clock (the time between segments left
    out). Without a recorded start, the launch of distrl's process: the offset errs early by its imports."""
    out, before = [], 0.0
    for seg in meta["segments"]:
        out.append(before + seg.get("monitor_start", seg["launched"]) - seg["started"])
        before += segment_s(seg)
    return out


def build_curve(run_dir: Path, meta: dict) -> tuple[list[dict], list[dict]]:
    """metrics.csv rows on this script's clock, each with the evaluation finished since the row before;
    and every evaluation at the time it finished, with the frames of the row before it."""
    starts = offsets(meta)
    metrics = split_segments(read_csv(run_dir / "metrics.csv"))
    evals = split_segments(read_csv(run_dir / "evaluations.csv"))
    curve, points = [], []
    for k, rows in enumerate(metrics):
        offset = starts[min(k, len(starts) - 1)]
        done = [(float(e["wall_s"]), int(float(e["updates"])), float(e["eval_return_mean"]))
                for e in (evals[k] if k < len(evals) else [])]
        walls = [float(m["wall_s"]) for m in rows]
        for t, u, mean in done:  # also one that finished after the segment's last row (the run stopped first)
            before = bisect.bisect_left(walls, t)  # the rows logged before it finished
            frames = int(float(rows[before - 1]["frames"])) if before else 0
            points.append({"wall_s": round(offset + t, 1), "frames": frames, "updates": u, "eval_return": mean})
        previous = 0.0
        for m, wall in zip(rows, walls):
            finished = [mean for t, _, mean in done if previous < t <= wall]
            curve.append({"wall_s": round(offset + wall, 1), "frames": int(float(m["frames"])),
                          "updates": int(float(m["updates"])), "train_return": number(m["episode_return_mean"]),
                          "eval_return": finished[-1] if finished else None,
                          **{c: number(m.get(c, "")) for c in CURVE[5:]}})
            previous = wall
    return curve, points


def summarise(curve: list[dict], evals: list[dict], meta: dict, gpu_rows: list[dict], target: float) -> dict:
    reached = next((r for r in evals if r["eval_return"] >= target), None)
    best = max(evals, key=lambda r: r["eval_return"]) if evals else None
    learning = [r for r in curve if r["updates"] > 0 and r["learner_updates_per_s"]]

    def mean(key: str, rows: list[dict]) -> float | None:
        values = [r[key] for r in rows if r[key] is not None]
        return round(float(np.mean(values)), 1) if values else None

    samples, inserts = mean("replay_samples_per_s", learning), mean("replay_inserts_per_s", learning)
    util = [float(g["gpu_util_pct"]) for g in gpu_rows if learning and float(g["wall_s"]) >= learning[0]["wall_s"]]
    last = curve[-1] if curve else {}
    return {"game": meta["game"], "arch": meta.get("arch", "apex"), "seed": meta["seed"], "machine": meta["machine"],
            "cores": meta.get("cores"),
            "plan": meta["plan"],
            "wall_s": last.get("wall_s"), "frames": last.get("frames"), "updates": last.get("updates"),
            "last_train_return": last.get("train_return"),
            "last_eval_return": evals[-1]["eval_return"] if evals else None,
            f"time_to_eval_{target:g}": reached,
            "best_eval": best,
            "env_frames_per_s": round(last["frames"] / last["wall_s"], 1) if last.get("wall_s") else None,
            "learner_updates_per_s": mean("learner_updates_per_s", learning),
            "replay_ratio": round(samples / inserts, 2) if samples and inserts else None,
            "gpu_util_pct_mean": round(float(np.mean(util)), 1) if util else None,
            "role_cpu": [seg["role_cpu"] for seg in meta.get("segments", []) if "role_cpu" in seg] or None,
            "evaluated": "after the run, each kept checkpoint" if meta.get("eval_after") else "beside training"}


def draw(curve: list[dict], evals: list[dict], out: Path, title: str) -> Path:
    from distrl.plotting import plot_comparison

    def columns(rows: list[dict], key: str) -> list[dict]:
        rows = [r for r in rows if r[key] is not None]
        return [{"wall_min": np.array([r["wall_s"] / 60.0 for r in rows]),
                 "frames": np.array([r["frames"] for r in rows], dtype=float),
                 "episode_return_mean": np.array([r[key] for r in rows], dtype=float)}] if rows else []

    curves = {"training (last 100 episodes)": columns(curve, "train_return"),
              "greedy evaluation (8 episodes)": columns(evals, "eval_return")}
    return plot_comparison({k: v for k, v in curves.items() if v}, out, title=title, xs=("wall_min", "frames"),
                           ylabel="return")


HEADER_FACTS = ("game", "arch", "seed", "machine", "cores", "plan")  # the summary's keys a result's header holds


def figures(result: dict) -> dict:
    """The summary's figures: what its header does not hold."""
    return {k: v for k, v in result.items() if k not in HEADER_FACTS}


def sitting_header(meta: dict, args: argparse.Namespace) -> dict:
    """The result's header: the run's first segment's command, start, speed index, commit and CPU (later
    segments', the resumes, in `resumed`), the game, the plan and this machine, labelled as the file name
    labels it. A collection may run on another commit or machine than the training did: the segments say
    which ran it (runs before they recorded it take the collection's)."""
    arch = meta.get("arch", "apex")
    segments = [s for s in meta["segments"] if "command" in s]
    head = R.header(segments[0]["command"] if segments else command_line("bench.pong"),
                    preset=meta.get("preset", PRESETS[arch]),
                    seed=meta["seed"], speed=False, game=meta["game"], arch=arch, cores=meta.get("cores"),
                    plan=meta["plan"])
    head["machine"]["label"] = meta["machine"]
    if meta["segments"]:
        head["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(meta["segments"][0]["started"]))
    if segments and segments[0].get("commit"):
        head["commit"] = segments[0]["commit"]
    if segments and segments[0].get("cpu_model"):
        head["machine"]["cpu_model"] = segments[0]["cpu_model"]
    measured = [s["speed_index"] for s in segments if s.get("speed_index")]
    if measured:
        head["speed_index"] = measured[0]
        head.pop("speed_index_note", None)
    elif not (args.no_speed_index and not args.collect):
        head["speed_index_note"] = "not measured: no segment of the run measured it"
    if len(segments) > 1:
        head["resumed"] = [{"command": s["command"], "speed_index": s.get("speed_index"),
                            **{k: s[k] for k in ("commit", "cpu_model") if s.get(k)}} for s in segments[1:]]
    return head


def main() -> None:
    t0 = time.time()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="ALE/Pong-v5")
    p.add_argument("--arch", default="apex", choices=tuple(PRESETS), help="the system to run (default apex)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=1200.0, help="wall-clock seconds in all, start-up included")
    p.add_argument("--run-dir", type=Path, help="default runs/bench-atari-<game>-seed<S>")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir up to --budget-s in all")
    p.add_argument("--collect", action="store_true", help="run nothing: rebuild curve.csv, the results and the figure")
    p.add_argument("--cpu", action="store_true", help="plan as if there were no GPU")
    p.add_argument("--target", type=float, default=19.0, help="evaluation return whose first crossing is timed")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more overrides, after the plan's")
    p.add_argument("--role-cpu-at", type=float, metavar="MIN",
                   help="bench.role_cpu's window this many minutes into the run: where the cores went (in the summary)")
    p.add_argument("--role-cpu-s", type=float, default=120.0, help="that window's seconds (default 120)")
    p.add_argument("--out-root", type=Path, default=ROOT / "bench", help="results/ and figures/ go under it")
    p.add_argument("--tag", help="names a variant in the result's and figure's files (atari-pong-cpu2-TAG-seed1): "
                                      "kept in bench.json for --resume and --collect")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    p.add_argument("--eval-after", type=int, metavar="UPDATES",
                   help="no evaluator beside training: keep a checkpoint every UPDATES learner updates and evaluate "
                        "each after the run (with --collect: the run's kept checkpoints)")
    args = p.parse_args()
    if args.tag and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.]*(-[A-Za-z0-9.]+)*", args.tag):
        p.error(f"--tag {args.tag!r}: use letters, digits, dots and single dashes (it goes into file names)")
    run_dir = args.run_dir or ROOT / "runs" / f"bench-atari-{run_name(args.game, args.arch)}-seed{args.seed}"
    meta_path = run_dir / "bench.json"

    if args.resume or args.collect:
        if not meta_path.exists():
            p.error(f"{run_dir} holds no bench.json: start the run without --resume/--collect first")
        meta = json.loads(meta_path.read_text())
        if args.resume and meta["segments"] and "ended" not in meta["segments"][-1]:
            p.error(f"{run_dir}: its last segment has no end in bench.json: a bench may still be running on it "
                    "(wait for it), or it was killed (then delete that last segment from bench.json)")
    else:
        if meta_path.exists():
            p.error(f"{run_dir} already holds a run: pass --resume to continue it, or another --run-dir")
        gpu = gpu_present() and not args.cpu
        cores = len(os.sched_getaffinity(0))  # the cores this process may use (taskset, cgroups' cpusets)
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        overrides, why = atari_plan(Machine(cores, gpu, memory, has_bf16_units("cpu"))) if args.arch == "apex" \
            else plan_others(args.arch, cores, args.game)
        if args.eval_after:
            overrides = {**overrides, **after_the_run(args.eval_after)}
        machine = "gpu" if gpu else f"cpu{cores}"
        meta = {"game": args.game, "arch": args.arch, "preset": PRESETS[args.arch], "seed": args.seed,
                "machine": machine, "cores": cores, "plan": overrides, "why": why,
                "extra_overrides": args.set, "segments": [], **({"tag": args.tag} if args.tag else {})}
    if not args.collect:
        speed_index = None if args.no_speed_index else R.header(command_line("bench.pong"))["speed_index"]
        t0 = time.time()  # the bench's clock starts after the speed index
        done = sum(s["ended"] - s["started"] for s in meta["segments"])
        budget = args.budget_s - done
        if budget <= 0:
            p.error(f"the run has had {done:.0f} s already: give --budget-s above that to continue it")
        print(f"{meta['why']}; {budget:.0f} s to run", flush=True)
        overrides = {**meta["plan"]}
        actors = overrides.pop("actors")
        sets = [f"{k}={v}" for k, v in overrides.items()] + meta["extra_overrides"] + args.set
        arch = meta.get("arch", "apex")
        cmd = [sys.executable, "-m", "distrl.cli", "train", arch, "--quiet"]
        if meta["segments"]:  # config.json holds the plan; only this call's own --set are new
            cmd += ["--resume", str(run_dir), *[x for s in args.set for x in ("--set", s)]]
        else:
            cmd += ["--env", meta["game"], "--runtime", "ray", "--preset", meta["preset"], "--actors", str(actors),
                    "--seed", str(meta["seed"]), "--max-frames", str(10**12), "--run-dir", str(run_dir),
                    *[x for s in sets for x in ("--set", s)]]
        run_dir.mkdir(parents=True, exist_ok=True)
        segment = {"started": t0, "launched": time.time(), "command": command_line("bench.pong"),
                   "speed_index": speed_index, "commit": commit(), "cpu_model": cpu_model()}
        meta["segments"].append(segment)
        meta_path.write_text(json.dumps(meta, indent=2))  # the run dir is distrl's: this file is the bench's own
        stop = threading.Event()
        metrics = run_dir / "metrics.csv"
        watchers = [threading.Thread(target=watch_start, args=(metrics, len(read_csv(metrics)), segment, stop))]
        if args.role_cpu_at is not None:
            watchers.append(threading.Thread(target=watch_roles, args=(segment, args.role_cpu_at * 60.0,
                                                                       args.role_cpu_s, stop)))
        if shutil.which("nvidia-smi"):
            watchers.append(threading.Thread(target=watch_gpu, args=(run_dir / "gpu.csv", t0 - done, stop)))
        for w in watchers:
            w.daemon = True
            w.start()
        try:
            run_for(cmd, budget - (segment["launched"] - t0), run_dir.parent / f"{run_dir.name}.log", grace_s=300.0,
                    append=len(meta["segments"]) > 1, stop_ray=False)
        finally:
            stop.set()
            segment["ended"] = time.time()
            meta_path.write_text(json.dumps(meta, indent=2))

    if args.eval_after or meta.get("eval_after"):
        meta["eval_after"] = True
        meta_path.write_text(json.dumps(meta, indent=2))
        evaluate_after(run_dir, meta.get("cores") or 1)
    curve, evals = build_curve(run_dir, meta)
    if meta.get("eval_after"):  # each placed at its parameters' minute already
        evals = after_points(curve, read_csv(run_dir / AFTER_EVALS), segment_stops(run_dir, meta))
    else:
        evals = [{**e, "params_wall_s": params_wall_s(curve, e["updates"])} for e in evals]
    for name, rows, fields in (("curve.csv", curve, CURVE),
                               ("evals.csv", evals, ("wall_s", "params_wall_s", "frames", "updates", "eval_return"))):
        with open(run_dir / name, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=fields)
            out.writeheader()
            out.writerows(rows)
    arch = meta.get("arch", "apex")
    if args.tag and args.tag != meta.get("tag"):  # a tag given at --resume or --collect names the files from now on
        meta["tag"] = args.tag
        meta_path.write_text(json.dumps(meta, indent=2))
    stem = result_name(meta)
    results = args.out_root / "results"
    results.mkdir(parents=True, exist_ok=True)
    result = summarise(curve, evals, meta, read_csv(run_dir / "gpu.csv"), args.target)
    (run_dir / "bench-summary.json").write_text(json.dumps(result, indent=2))
    out = results / f"{stem}.jsonl"
    with open(out, "w") as f:
        R.write_sitting(f, sitting_header(meta, args), [{"kind": "curve", **r} for r in curve]
                        + [{"kind": "eval", **r} for r in evals] + [{"kind": "summary", **figures(result)}])
    title = f"{arch} on {meta['game']}, seed {meta['seed']}, {meta['machine']} ({meta.get('cores', '?')} cores)"
    figure = draw(curve, evals, args.out_root / "figures" / f"{stem}.png", title) if curve else None
    print(json.dumps(result, indent=2))
    print(f"wrote {run_dir}/curve.csv, evals.csv and bench-summary.json, {out}"
          + (f", and {figure}" if figure else ""))


if __name__ == "__main__":
    main()
