"""Where a running distrl run's CPU goes, role by role (issue 59: "profile the 2-core run first, and say what
bounds it").

Run it beside a run on Ray (bench.pong, bench.minatar, distrl train --runtime ray): it reads every process's
CPU time from /proc twice, `--seconds` apart, and sums it by role. Ray titles each role's process after
its class (ray::LearnerWorker, ray::ActorWorker, ray::ReplayShard, ray::EvaluatorWorker, ...), so the role
is read from the title; the driver is the `distrl.cli train` process; Ray's own daemons (raylet, GCS,
dashboard, log monitor) are one row; everything else on the machine is "other". A role's figure is in cores:
1.00 is one core busy for the whole window. The machine's total busy share comes from /proc/stat.

    .venv/bin/python -m bench.role_cpu --seconds 120                  # a table
    .venv/bin/python -m bench.role_cpu --seconds 120 --out bench/results/F.jsonl --note "Ape-X, Pong, 2-core plan"

With --out, a sitting of bench/results/ with a row per role. Reads only /proc (Linux); asserts nothing."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bench import results
from bench.runs import command_line

TICK = os.sysconf("SC_CLK_TCK")
RAY_DAEMONS = ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py", "runtime_env", "ray/_private")


def role_of(cmdline: str) -> str:
    """A process's role from its command line (Ray sets a role's title to ray::Class or ray::Class.method)."""
    if cmdline.startswith("ray::"):
        return cmdline[5:].split(".")[0].split(" ")[0] or "ray worker (idle)"
    if "distrl.cli" in cmdline and " train" in cmdline:
        return "driver"
    if any(d in cmdline for d in RAY_DAEMONS):
        return "ray daemons"
    return "other"


def cpu_seconds() -> dict[int, tuple[str, float]]:
    """Every process's role and CPU seconds so far (user + system, all its threads)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone since the listing
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
        out[int(entry)] = (role_of(cmdline), (int(fields[11]) + int(fields[12])) / TICK)
    return out


def machine_busy() -> tuple[float, float]:
    """Busy and total jiffies of all cores (/proc/stat's first line)."""
    values = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


def by_role(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]], seconds: float) -> dict[str, float]:
    """Cores each role kept busy over the window: a process that started within it counts from 0."""
    roles: dict[str, float] = {}
    for pid, (role, cpu) in after.items():
        start = before.get(pid, (role, 0.0))[1]
        roles[role] = roles.get(role, 0.0) + max(0.0, cpu - start) / seconds
    return dict(sorted(roles.items(), key=lambda kv: -kv[1]))


def window(seconds: float) -> tuple[dict[str, float], float, float]:
    """Cores busy by role over the next `seconds`, the machine's busy share over them, and the window's length."""
    (busy0, total0), before, t0 = machine_busy(), cpu_seconds(), time.perf_counter()
    time.sleep(seconds)
    (busy1, total1), after, wall = machine_busy(), cpu_seconds(), time.perf_counter() - t0
    return by_role(before, after, wall), (busy1 - busy0) / max(1, total1 - total0), wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--out", type=Path, help="also append a sitting to this result file")
    p.add_argument("--note", default="", help="what run this window watched (kept in the sitting's header)")
    args = p.parse_args()
    roles, busy, wall = window(args.seconds)
    cores = os.cpu_count() or 1
    print(f"{wall:.0f} s on {cores} cores, the machine {busy:.0%} busy")
    for role, used in roles.items():
        print(f"{role:>20}: {used:5.2f} cores ({used / cores:.0%} of the machine)")
    if args.out:
        rows = [{"contender": role, "cores_busy": round(used, 3), "share": round(used / cores, 3)} for role, used in roles.items()]
        rows.append({"contender": "machine", "share": round(busy, 3), "window_s": round(wall, 1)})
        with open(args.out, "a") as f:
            results.write_sitting(f, results.header(command_line("bench.role_cpu"), speed=False, note=args.note,
                                                    cores=cores), rows)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
