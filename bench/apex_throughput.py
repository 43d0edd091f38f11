"""Ape-X acting throughput on ALE/Pong-v5: what distrl's Ray pipeline costs over a bare loop.

Run from the repository root: python -m bench.apex_throughput [--seconds S] [--actors 1,2,4] [--envs-per-actor K]
     [--quick]

For each actor count N it measures, on this machine, in emulator frames/s (4 per agent step,
every column counts the same way):

  raw ALE    N processes stepping ale_py's emulator directly with random actions (no
             preprocessing, no screen copies): the ceiling the emulator sets.
  env only   N processes stepping distrl's preprocessed env (make_env) with random actions.
  bare loop  N processes, each stepping K envs (make_env) and doing one batched forward pass of
             the same dueling Nature CNN per step (one torch thread, as an actor has): distrl's
             acting work with no Ray, no replay, no transport, no n-step/priority bookkeeping.
  paused     distrl's ray runtime with N actors and the learner paused (replay.min_size above
             the run's frames): actors still build n-step transitions, compute priorities, send
             batches to the replay shard and pull parameters.
  training   the same with the learner training (replay.min_size 2000, batch 64 instead of the
             paper's 512 so a 2-core CPU machine stays usable), plus learner batches/s, replay
             inserts/s, actor param pulls/s, and how the CPU-seconds of the run split between
             the actor, learner and replay processes (and the rest: driver, raylet, gcs, idle
             workers).

How to read paused/bare: the share of the bare loop's frame rate the acting pipeline keeps. The
issue's target is >= 0.70, i.e. distrl's own overhead (transitions, priorities, flushes to the
replay, parameter pulls, Ray calls, the replay process and the driver sharing the cores) costs at
most 30%. With N > cores both sides are oversubscribed the same way. distrl's rates are steady
state: a run's window opens once every actor is acting (and, training, the learner updating),
lasts about S seconds, and its rates come from the run's metrics.csv rows inside it (not the
whole-run averages of summary.json, which include start-up). A `*` marks a run that never got a
steady window, whose figures are whole-run averages.

Prints figures only and asserts nothing about times. The machine is shared and single 20 s runs
move by +-10-15%: run it twice before trusting a difference, and check the "busy on the machine"
figures in the details (more than this run's own cores means someone else was using the CPU).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench.machine import machine_info, versions

ENV_ID = "ALE/Pong-v5"
FRAME_SKIP = 4           # emulator frames per agent step (make_env's action repeat)
TRAIN_MIN_SIZE = 2000    # replay.min_size for the training runs
TRAIN_BATCH = 64         # learner.batch_size for the training runs (the preset has 512)
PAUSED_MIN_SIZE = 10**9  # never reached: the learner stays paused
# Ray titles its worker processes "ray::<Class>" ("ray::<Class>.<method>" while a call runs).
ROLES = {"ray::ActorWorker": "actors", "ray::LearnerWorker": "learner", "ray::ReplayShard": "replay"}


# ------------------------------------------------------------------ the baselines, one process each

def _raw_ale(index: int, envs: int):
    """One emulator whatever `envs` is: a process-bound rate does not depend on how many it steps."""
    import ale_py
    from ale_py import roms
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", index)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("frame_skip", 1)
    ale.loadROM(roms.get_rom_path("pong"))
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(index)

    def step() -> int:
        action = actions[rng.integers(len(actions))]
        for _ in range(FRAME_SKIP):
            ale.act(action)
        if ale.game_over():
            ale.reset_game()
        return FRAME_SKIP
    return step


def _envs(index: int, count: int) -> list:
    from distrl.envs import make_env
    envs = [make_env(ENV_ID, "train", seed=1000 * index + j) for j in range(count)]
    for env in envs:
        env.obs = env.reset()[0]
    return envs


def _step_env(env, action: int) -> None:
    obs, _, terminated, truncated, _ = env.step(action)
    env.obs = env.reset()[0] if terminated or truncated else obs


def _env_only(index: int, count: int):
    envs = _envs(index, count)
    rng = np.random.default_rng(index)

    def step() -> int:
        for env in envs:
            _step_env(env, int(rng.integers(env.action_space.n)))
        return FRAME_SKIP * len(envs)
    return step


def _bare_loop(index: int, count: int):
    """The acting work without the framework: K env steps and one batched forward pass per step."""
    import torch

    from distrl.nets import make_q_network
    torch.set_num_threads(1)  # as distrl's ActorWorker
    envs = _envs(index, count)
    net = make_q_network(envs[0].observation_space.shape, envs[0].action_space.n, dueling=True).eval()
    rng = np.random.default_rng(index)

    def step() -> int:
        with torch.no_grad():
            q = net(torch.as_tensor(np.stack([env.obs for env in envs]))).numpy()
        explore = rng.random(len(envs)) < 0.4
        for j, env in enumerate(envs):
            action = int(rng.integers(q.shape[1])) if explore[j] else int(q[j].argmax())
            _step_env(env, action)
        return FRAME_SKIP * len(envs)
    return step


LOOPS = {"raw ALE": _raw_ale, "env only": _env_only, "bare loop": _bare_loop}


def _loop_worker(kind: str, index: int, envs: int, seconds: float, barrier, results) -> None:
    step = LOOPS[kind](index, envs)
    for _ in range(20):  # warm up (first forward passes, first resets)
        step()
    barrier.wait()
    frames, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        frames += step()
    results.put((frames, time.perf_counter() - start))


def loop_rate(kind: str, procs: int, envs: int, seconds: float) -> dict:
    """Frames/s summed over `procs` processes that all start together and run `seconds`."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(procs + 1), ctx.Queue()
    workers = [ctx.Process(target=_loop_worker, args=(kind, i, envs, seconds, barrier, results))
               for i in range(procs)]
    for w in workers:
        w.start()
    barrier.wait()
    busy = SystemCpu()
    out = [results.get(timeout=seconds + 120) for _ in workers]
    cores = busy.cores()
    for w in workers:
        w.join()
    return {"fps": sum(f / dt for f, dt in out), "busy_cores": cores}


# ------------------------------------------------------------------ CPU accounting

class SystemCpu:
    """Busy cores of the whole machine (every user) since creation, from /proc/stat."""

    def __init__(self):
        self.t0, self.busy0 = time.perf_counter(), self._busy()

    @staticmethod
    def _busy() -> float:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def cores(self) -> float:
        return (self._busy() - self.busy0) / max(time.perf_counter() - self.t0, 1e-9)


class CpuSampler(threading.Thread):
    """Watches one distrl run from the driver process, once a second.

    The steady window opens when `ready()` returns a metrics row count (the run has logged and,
    in training runs, the learner is updating) and every actor process has been seen acting (its
    Ray title is `ray::ActorWorker.run`): with N actors starting on 2 cores that takes seconds.
    From then on it samples the CPU time of this process and its descendants (raylet, gcs, Ray
    workers), and calls `stop_run()` once the window has lasted `seconds` (or nothing opened in
    `max_wait`). Without psutil it only times the window."""

    def __init__(self, actors: int, ready, stop_run, seconds: float, max_wait: float):
        super().__init__(daemon=True)
        try:
            import psutil  # ray ships it (ray/thirdparty_files), on the path once ray is imported
        except ImportError:
            psutil = None
        self.psutil, self.me = psutil, psutil.Process() if psutil else None
        self.actors, self.ready, self.stop_run = actors, ready, stop_run
        self.seconds, self.max_wait = seconds, max_wait
        self.acting: set[int] = set()
        self.open_row: int | None = None  # metrics rows written before the window opened
        self.first: dict[int, tuple[str, float]] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.window: tuple[float, float] | None = None
        self.system: SystemCpu | None = None
        self.system_cores = float("nan")
        self._halt = threading.Event()

    def _sample(self) -> dict[int, tuple[str, float]]:
        out = {}
        if self.me is None:
            return out
        for proc in [self.me, *self.me.children(recursive=True)]:
            try:
                title = "driver" if proc.pid == self.me.pid else (proc.cmdline() or [proc.name()])[0]
                t = proc.cpu_times()
            except (self.psutil.NoSuchProcess, self.psutil.AccessDenied, self.psutil.ZombieProcess):
                continue
            if title.startswith("ray::ActorWorker.run"):
                self.acting.add(proc.pid)
            role = next((r for prefix, r in ROLES.items() if title.startswith(prefix)), title)
            out[proc.pid] = (role if role in ("driver", *ROLES.values()) else "other", t.user + t.system)
        return out

    def run(self) -> None:
        t_open, t_begin = None, time.perf_counter()
        while not self._halt.wait(1.0):
            now = time.perf_counter()
            sample = self._sample()
            if t_open is None:
                rows = self.ready()
                if rows and (self.me is None or len(self.acting) >= self.actors):
                    t_open, self.system, self.first, self.open_row = now, SystemCpu(), sample, rows
                elif now - t_begin > self.max_wait:
                    self.stop_run()
                continue
            self.last.update(sample)
            self.window = (t_open, now)
            self.system_cores = self.system.cores()
            if now - t_open >= self.seconds:
                self.stop_run()

    def stop(self) -> dict:
        """CPU-seconds per role over the window, plus busy cores of ours and of the whole machine."""
        self._halt.set()
        self.join()
        if not self.window or self.me is None:
            return {}
        seconds: dict[str, float] = {}
        for pid, (role, cpu) in self.last.items():
            # A process that started after the window opened counts from zero.
            seconds[role] = seconds.get(role, 0.0) + cpu - self.first.get(pid, (role, 0.0))[1]
        wall = self.window[1] - self.window[0]
        return {"cpu_s": seconds, "wall_s": wall, "our_cores": sum(seconds.values()) / wall,
                "machine_cores": self.system_cores}


# ------------------------------------------------------------------ distrl runs

RATES = ("env_frames_per_s", "replay_inserts_per_s", "learner_updates_per_s", "param_pulls_per_s")


def metrics_rows(run_dir: Path) -> list[dict[str, float]]:
    try:
        with open(run_dir / "metrics.csv") as f:
            return [{k: float(v) for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(f)]
    except (OSError, ValueError):
        return []


def steady_rates(rows: list[dict[str, float]], first: int) -> dict[str, float] | None:
    """Time-weighted mean of the per-row rates (each row holds the rates since the row before)
    over rows[first:-1]: rows logged after the window opened, less the one written after the stop."""
    window = [(rows[i], rows[i]["wall_s"] - rows[i - 1]["wall_s"]) for i in range(max(first, 1), len(rows) - 1)]
    total = sum(dt for _, dt in window)
    if total <= 0:
        return None
    return {n: sum(r.get(n, 0.0) * dt for r, dt in window) / total for n in RATES} | {"window_s": total}


def distrl_run(actors: int, envs: int, seconds: float, training: bool, log_every_s: float,
               max_wait: float, frame_cap: int) -> dict:
    """One ray-runtime run, stopped about `seconds` after its steady window opens.

    The stop lowers max_frames on the live config, which the ray driver reads on every tick;
    should a later runtime copy it instead, `frame_cap` still ends the run."""
    from distrl.config import build_config
    from distrl.training import train
    with tempfile.TemporaryDirectory(prefix="apex-bench-") as tmp:
        run_dir = Path(tmp) / "run"
        cfg = build_config("apex", ENV_ID, "apex-atari", {
            "runtime": "ray", "actors": actors, "max_frames": frame_cap, "seed": 0, "run_dir": str(run_dir),
            "eval_episodes": 0, "log_every_s": log_every_s, "actor.envs_per_actor": envs,
            "replay.min_size": TRAIN_MIN_SIZE if training else PAUSED_MIN_SIZE,
            **({"learner.batch_size": TRAIN_BATCH} if training else {}),
        })

        def ready() -> int:  # rows logged so far, once logging (training: updating) has begun
            rows = metrics_rows(run_dir)
            return len(rows) if rows and (not training or rows[-1].get("updates", 0) > 0) else 0

        def stop_run() -> None:
            cfg.max_frames = 1

        # One log period more than `seconds`: the first row after opening covers a partial period.
        sampler = CpuSampler(actors, ready, stop_run, seconds + log_every_s, max_wait)
        sampler.start()
        try:
            summary = train(cfg, live=False)
        finally:
            cpu = sampler.stop()
        rows = metrics_rows(run_dir)
    rates = steady_rates(rows, sampler.open_row + 1) if sampler.open_row else None
    steady = rates is not None
    if not steady:  # no steady window: the whole-run averages, start-up included
        rates = {k: summary["rates"].get(k, float("nan")) for k in RATES} | {"window_s": summary["wall_s"]}
    return {**rates, "steady": steady, "frames": summary["frames"], "updates": summary["updates"],
            "wall_s": summary["wall_s"], "cpu": cpu}


# ------------------------------------------------------------------ report

def machine(info: dict) -> str:
    return (f"{info['cpu_count']} cores ({info['cpus_allowed']} usable), {info['cpu_model']}, "
            f"load avg {os.getloadavg()[0]:.2f} at start")


def cpu_share(cpu: dict) -> str:
    if not cpu:
        return "n/a"
    s = cpu["cpu_s"]
    total = sum(s.values()) or 1.0
    pct = [100 * s.get(r, 0.0) / total for r in ("actors", "learner", "replay")]
    rest = 100 - sum(pct)
    return "/".join(f"{p:.0f}" for p in pct) + f" (+{rest:.0f} other) %, {cpu['our_cores']:.2f} cores"


def fmt(x: float, steady: bool = True) -> str:
    return f"{x:,.0f}" + ("" if steady else "*")


def table(results: list[dict]) -> str:
    head = ("actors | bare loop f/s | raw ALE f/s | env only f/s | distrl paused f/s | paused/bare | "
            "training f/s | learner batches/s | inserts/s | param pulls/s | CPU share actors/learner/replay")
    lines = ["| " + head + " |", "|" + "---|" * (head.count("|") + 1)]
    for r in results:
        p, t = r["paused"], r["training"]
        lines.append("| " + " | ".join([
            str(r["actors"]), fmt(r["bare"]["fps"]), fmt(r["raw"]["fps"]), fmt(r["env"]["fps"]),
            fmt(p["env_frames_per_s"], p["steady"]), f"{p['env_frames_per_s'] / r['bare']['fps']:.2f}",
            fmt(t["env_frames_per_s"], t["steady"]), f"{t['learner_updates_per_s']:.1f}",
            fmt(t["replay_inserts_per_s"], t["steady"]), f"{t['param_pulls_per_s']:.2f}", cpu_share(t["cpu"]),
        ]) + " |")
    return "\n".join(lines)


def details(results: list[dict]) -> str:
    out = []
    for r in results:
        for name in ("paused", "training"):
            d = r[name]
            cpu = d["cpu"]
            shares = ", ".join(f"{k} {v:.1f}" for k, v in sorted(cpu.get("cpu_s", {}).items()))
            out.append(f"- {r['actors']} actor(s), {name}: {d['frames']:,} frames, {d['updates']} updates, "
                       f"{d['wall_s']:.0f} s wall, rates over {d['window_s']:.0f} s"
                       f"{'' if d['steady'] else ' (whole run, start-up included: too short for a steady window)'}"
                       + (f"; CPU-s {shares} over {cpu['wall_s']:.0f} s = {cpu['our_cores']:.2f} cores ours, "
                          f"{cpu['machine_cores']:.2f} busy on the machine" if cpu else ""))
        out.append(f"- {r['actors']} process(es), busy cores on the machine during bare loop "
                   f"{r['bare']['busy_cores']:.2f}, raw ALE {r['raw']['busy_cores']:.2f}, "
                   f"env only {r['env']['busy_cores']:.2f} (more than min(N, cores) = other load)")
    return "\n".join(out)


# ------------------------------------------------------------------ main

def training_only(actors: int, envs: int, seconds: float) -> dict:
    """The training run alone (--training-only: an A/B of two commits' pipelines, run in turns)."""
    cap = int(2 * 4000 * (seconds + 120)) + 2 * TRAIN_MIN_SIZE * FRAME_SKIP
    t = distrl_run(actors, envs, seconds, True, 2.0, 120.0, cap)
    print(f"| {actors} | {fmt(t['env_frames_per_s'], t['steady'])} | {t['learner_updates_per_s']:.1f} | "
          f"{fmt(t['replay_inserts_per_s'], t['steady'])} | {t['window_s']:.0f} |", flush=True)
    return {"actors": actors, "training": t}


def measure(actors: int, envs: int, seconds: float, quick: bool) -> dict:
    say = lambda msg: print(f"[{actors} actor(s)] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    r = {"actors": actors}
    for key, kind, secs in (("bare", "bare loop", seconds), ("raw", "raw ALE", seconds / 2),
                            ("env", "env only", seconds / 2)):
        r[key] = loop_rate(kind, actors, envs, secs)
        say(f"{kind}: {r[key]['fps']:,.0f} frames/s")
    log_every = 1.0 if quick else 2.0
    max_wait = 45.0 if quick else 120.0  # start-up (and, training, filling min_size) longer than this: give up
    # The runs stop on time (see distrl_run); this frame cap is only a backstop.
    cap = int(2 * r["bare"]["fps"] * (seconds + max_wait)) + 2 * TRAIN_MIN_SIZE * FRAME_SKIP
    r["paused"] = distrl_run(actors, envs, seconds, False, log_every, max_wait, cap)
    say(f"distrl paused: {r['paused']['env_frames_per_s']:,.0f} frames/s")
    r["training"] = distrl_run(actors, envs, seconds, True, log_every, max_wait, cap)
    say(f"distrl training: {r['training']['env_frames_per_s']:,.0f} frames/s, "
        f"{r['training']['learner_updates_per_s']:.1f} batches/s")
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per measurement (default 20)")
    parser.add_argument("--actors", default="1,2,4", help="actor counts, comma-separated (default 1,2,4)")
    parser.add_argument("--envs-per-actor", type=int, default=1, help="envs per actor / per bare process")
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 actor, 4 s budgets")
    parser.add_argument("--training-only", action="store_true",
                        help="the training run alone: frames/s, learner batches/s, inserts/s (an A/B of two commits)")
    args = parser.parse_args()
    counts = [1] if args.quick else [int(x) for x in args.actors.split(",") if x.strip()]
    seconds = 4.0 if args.quick else args.seconds

    from distrl.runtime import protect_local_ray
    protect_local_ray("")  # as distrl.train does, before Ray is imported: a token for the Ray started here
    import ray

    from distrl.runtime.ray import connect
    started = time.perf_counter()
    info = machine_info()
    print(f"# distrl Ape-X throughput, {ENV_ID}, preset apex-atari ({datetime.datetime.now():%Y-%m-%d %H:%M})\n")
    print(f"- machine: {machine(info)}")
    print(f"- {versions(info)} (the working tree may differ)")
    connect("", max(8, max(counts) + 4))  # one Ray for every run; distrl's runs join it
    try:
        if args.training_only:
            print("| actors | training f/s | learner batches/s | inserts/s | window s |\n|---|---|---|---|---|")
            for n in counts:
                training_only(n, args.envs_per_actor, seconds)
            return
        results = [measure(n, args.envs_per_actor, seconds, args.quick) for n in counts]
    finally:
        ray.shutdown()
    print(f"- frames are emulator frames (4 per agent step); {args.envs_per_actor} env(s) per actor and per "
          f"bare process; ~{seconds:.0f} s per measurement ({seconds / 2:.0f} s for raw ALE and env only)")
    print(f"- training runs: replay.min_size {TRAIN_MIN_SIZE}, learner.batch_size {TRAIN_BATCH} (the preset's "
          f"512 is too heavy for a 2-core CPU machine), learner torch threads as distrl's ray runtime sets them, otherwise "
          f"preset apex-atari; paused runs: replay.min_size "
          f"{PAUSED_MIN_SIZE:.0e} so the learner never starts")
    print("- CPU share: CPU-seconds of the actor / learner / replay processes over all of this run's "
          "processes (other: driver, raylet, gcs, idle workers), and the cores they used together\n")
    print(table(results))
    if not all(r[k]["steady"] for r in results for k in ("paused", "training")):
        print("\n`*`: the run was too short for a steady window, so whole-run averages (start-up included).")
    print()
    print(details(results))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
