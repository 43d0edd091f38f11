"""The control plane at cluster scale: Ape-X on CartPole (the small network, so learning costs little) with
1, 8, 24 and 48 actors over the two worker hosts of bench/hosts.py's cluster (private disks, the driver alone
on a head with no CPU for roles). For each actor count it measures, over a steady window after start-up:
env frames/s, replay inserts/s and learner updates/s (the run's own metrics.csv rows), and the busy share
(CPU-seconds per wall-second, from /proc) of the driver process, the replay process, the learner and all
actor processes together. Then it says which part saturates first and what that predicts for 256 actors
over 8 hosts, on paper. It measures the driver, the replay and parameter publication, not learning.

    python -m bench.cluster_scale [--actors 1,8,24,48] [--seconds 60]

Needs root (network and mount namespaces) and the machine alone; writes
bench/results/cluster-scale-<date>.jsonl in bench/results.py's schema (one sitting: the settings and the
projection in its header, one row per actor count; `--no-speed-index` skips the speed index). Every host is a namespace of this one machine: the actors of all
hosts share its cores, so past the core count the frames/s measure the cores, and the per-call CPU costs
of the driver and the replay are the figures that carry to a real cluster."""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import os
import signal
import tempfile
import time
from pathlib import Path

from bench import results
from bench.hosts import NET, cluster, no_namespaces_reason, pids, roles_in
from bench.machine import versions
from bench.runs import RESULTS, command_line

TICKS = os.sysconf("SC_CLK_TCK")
STEPS_PER_CALL = 100  # ray.steps_per_call (set here; apex-cartpole has 50): an actor's steps per driver call
# The control plane loaded as hard as the actors can: no replay ratio holds them to the learner's pace
# (apex-cartpole's 16 samples per insert would make this a measure of the learner).
SETTINGS = {"replay.samples_per_insert": 0, "ray.steps_per_call": STEPS_PER_CALL, "replay.min_size": 1000,
            "eval_episodes": 0, "log_every_s": 2}


def cpu_seconds(pid_list: list[int]) -> float:
    total = 0.0
    for pid in pid_list:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total


def rows_of(run: Path) -> list[dict[str, float]]:
    try:
        return [{k: float(v) for k, v in row.items() if v not in ("", None)}
                for row in csv.DictReader((run / "metrics.csv").open())]
    except (OSError, ValueError):
        return []


def last_row(run: Path) -> dict[str, float]:
    rows = rows_of(run)
    return rows[-1] if rows else {}


def measure(c, actors: int, seconds: float, root: Path) -> dict:
    run = root / f"run-{actors}"
    driver = c.distrl("train", "apex", "--env", "CartPole-v1", "--runtime", "ray", "--address", c.address,
                      "--actors", str(actors), "--max-frames", str(10**9), "--seed", "1", "--run-dir", str(run),
                      "--quiet", *[a for k, v in SETTINGS.items() for a in ("--set", f"{k}={v}")])
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and last_row(run).get("updates", 0) <= 0:
            if driver.poll() is not None:
                raise RuntimeError(f"{actors} actors: the run ended early:\n{driver.stdout.read()[-2000:]}")
            time.sleep(1)
        time.sleep(5)  # past the first updates' warm-up

        def parts() -> dict[str, list[int]]:
            hosts = list(c.hosts.values())
            return {"driver": [driver.pid], "replay": [p for ns in hosts for p in roles_in(ns, "ReplayShard")],
                    "learner": [p for ns in hosts for p in roles_in(ns, "LearnerWorker")],
                    "actors": [p for ns in hosts for p in roles_in(ns, "ActorWorker")],
                    "all": [p for ns in hosts for p in pids(ns)] + [driver.pid]}

        procs, row0, t0 = parts(), last_row(run), time.monotonic()
        cpu0 = {k: cpu_seconds(v) for k, v in procs.items()}
        time.sleep(seconds)
        procs, row1, t1 = parts(), last_row(run), time.monotonic()
        cpu1 = {k: cpu_seconds(v) for k, v in procs.items()}
    finally:
        driver.send_signal(signal.SIGTERM)  # stops as Ctrl-C does: a checkpoint, then exit
        try:
            driver.wait(timeout=120)
        except Exception:
            driver.kill()
    span = row1["wall_s"] - row0["wall_s"]
    frames = row1["frames"] - row0["frames"]
    window = [r for r in rows_of(run) if row0["wall_s"] < r["wall_s"] <= row1["wall_s"]]
    result = {"actors": actors, "window_s": round(span, 1), "frames_per_s": frames / span,
              "updates_per_s": (row1["updates"] - row0["updates"]) / span,
              "actor_calls_per_s": frames / STEPS_PER_CALL / span}
    for key in ("replay_inserts_per_s", "param_pulls_per_s"):  # the rows' own rates, averaged over the window
        values = [r[key] for r in window if key in r and not math.isnan(r[key])]
        result[key.removeprefix("replay_")] = sum(values) / len(values) if values else math.nan
    wall = t1 - t0
    for k in cpu0:  # a process that restarted in the window makes its share a lower bound
        result[f"{k}_busy"] = max(0.0, cpu1[k] - cpu0[k]) / wall
    result["driver_ms_per_call"] = 1000 * result["driver_busy"] / max(result["actor_calls_per_s"], 1e-9)
    # the replay's CPU per inserted transition, its sampling for the learner included: an upper bound
    result["replay_us_per_insert"] = 1e6 * result["replay_busy"] / max(result["frames_per_s"], 1e-9)
    return result


def project(rows: list[dict], actors: int = 256, hosts: int = 8) -> str:
    """256 actors over 8 hosts on paper: each actor as fast as alone on a core of its own (the 1-actor row),
    the driver's and the replay's CPU cost per call and per insert as measured at the largest count."""
    one, big = rows[0], rows[-1]
    per_actor = one["frames_per_s"]
    frames = per_actor * actors
    driver = frames / STEPS_PER_CALL * big["driver_ms_per_call"] / 1000
    replay = frames * big["replay_us_per_insert"] / 1e6
    limits = {"the driver": 1 / max(driver / actors, 1e-12), "the replay shard": 1 / max(replay / actors, 1e-12)}
    first = min(limits, key=limits.get)
    return (f"{actors} actors over {hosts} hosts at {per_actor:,.0f} frames/s each ({frames:,.0f} frames/s): the "
            f"driver would be {driver:.2f} cores busy ({big['driver_ms_per_call']:.2f} ms a call, one call per "
            f"{STEPS_PER_CALL} steps), one replay shard {replay:.2f} cores ({big['replay_us_per_insert']:.1f} us an "
            f"insert); {first} saturates first, at about {limits[first]:,.0f} such actors (replay.shards spreads "
            "the replay; the driver is one process)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--actors", default="1,8,24,48")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    if (reason := no_namespaces_reason()) is not None:
        raise SystemExit(f"cluster_scale: {reason}")
    counts = [int(x) for x in args.actors.split(",")]
    cpus = math.ceil((max(counts) + 3) / 2) + 1  # Ray's CPU counts, so every role fits; the cores are shared
    head = results.header(command_line("bench.cluster_scale"), speed=not args.no_speed_index, seconds=args.seconds,
                          settings=SETTINGS)
    print(f"# distrl cluster scale ({datetime.datetime.now():%Y-%m-%d %H:%M}), "
          f"{versions({**head['machine'], 'commit': head['commit']})}")
    print("| actors | frames/s | inserts/s | updates/s | param pulls/s | driver | replay | learner | actors | all "
          "| driver ms/call | replay us/insert |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, cluster({"a": (f"{NET}.2", cpus), "b": (f"{NET}.3", cpus)},
                                                       Path(tmp)) as c:
        for n in counts:
            rows.append(measure(c, n, args.seconds, Path(tmp)))
            r = rows[-1]
            print(f"| {n} | {r['frames_per_s']:,.0f} | {r['inserts_per_s']:,.0f} | {r['updates_per_s']:,.1f} | "
                  f"{r['param_pulls_per_s']:,.1f} | "
                  f"{r['driver_busy']:.2f} | {r['replay_busy']:.2f} | {r['learner_busy']:.2f} | "
                  f"{r['actors_busy']:.2f} | {r['all_busy']:.2f} | {r['driver_ms_per_call']:.2f} | "
                  f"{r['replay_us_per_insert']:.1f} |", flush=True)
    line = project(rows)
    print(line)
    out = RESULTS / f"cluster-scale-{datetime.date.today()}.jsonl"
    with open(out, "w") as f:
        results.write_sitting(f, {**head, "projection": line}, rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
