"""The one schema of bench/results/: JSON Lines in sittings.

A result file is a sequence of sittings. A sitting starts with a header line, which says where and how
its rows were made, and its rows follow it, up to the next header:

    {"schema": "distrl-result/1", "date": "2026-11-28T19:50:00Z", "commit": "5095325...",
     "command": "python -m bench.minatar --game Breakout --seed 1", "preset": "apex-minatar", "seed": 1,
     "machine": {...bench.machine.machine_info()...}, "speed_index": {...bench.speed.measure()...}}
    {"contender": "distrl-apex", "wall_s": 20.7, "frames": 22000, "eval_mean": null, ...}
    ...

A sitting is one bench invocation on one machine: rows of one sitting are comparable with each other;
rows of two sittings are comparable only as far as their speed indices are. Files written before the
speed index (issue 56) were cut into sittings by date and machine; their headers say `"speed_index":
null` and why in `speed_index_note`. Rows keep whatever keys their bench writes; `contender` names the
system or variant where a sitting holds several.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

SCHEMA = "distrl-result/1"
HEADER_KEYS = ("schema", "date", "commit", "command", "preset", "seed", "machine", "speed_index")
NOT_MEASURED = "not measured: made before the speed index (issue 56)"


class SchemaError(ValueError):
    """A result file that does not follow the schema: names the file, the line and what is wrong."""


@dataclass
class Sitting:
    header: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def day(self) -> str:
        return str(self.header["date"])[:10]

    @property
    def speed(self) -> float | None:
        index = self.header.get("speed_index")
        return index.get("index") if isinstance(index, dict) else None

    @property
    def cpu(self) -> str | None:
        """The CPU's maker and family, short ("AMD EPYC", "Intel Xeon"): machines of one label came as
        either, and the speed index, one figure against an AMD reference, does not say which."""
        model = (self.header.get("machine") or {}).get("cpu_model")
        if not model or model == "unknown":
            return None
        for mark in ("(R)", "(TM)", " Processor", " CPU"):
            model = model.replace(mark, "")
        return " ".join(model.split()[:2])

    def contenders(self) -> list[str]:
        return list(dict.fromkeys(r["contender"] for r in self.rows if "contender" in r))

    def of(self, contender: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("contender") == contender]


def header(command: str, *, preset: str | None = None, seed: int | list[int] | None = None,
           speed: bool = True, **extra: Any) -> dict[str, Any]:
    """A new sitting's header for this machine, now; `speed` measures the speed index first (about 10 s)."""
    from bench.machine import machine_info
    from bench.speed import measure

    info = machine_info()
    return {"schema": SCHEMA, "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": info.pop("commit"), "command": command, "preset": preset, "seed": seed, "machine": info,
            "speed_index": measure() if speed else None,
            **({} if speed else {"speed_index_note": "not measured: --no-speed-index"}), **extra}


def write_sitting(out: TextIO, head: dict[str, Any], rows: Iterable[dict[str, Any]] = ()) -> None:
    """A header line (checked) and rows; a bench that streams its rows writes them after with `write_row`."""
    check_header(head, "the header being written")
    out.write(json.dumps(head) + "\n")
    for row in rows:
        write_row(out, row)


def write_row(out: TextIO, row: dict[str, Any]) -> None:
    if "schema" in row:
        raise SchemaError(f"a row may not hold the key 'schema' (it marks a header): {row}")
    out.write(json.dumps(row) + "\n")
    out.flush()


def check_header(head: dict[str, Any], where: str) -> None:
    missing = [k for k in HEADER_KEYS if k not in head]
    if missing:
        raise SchemaError(f"{where}: the header lacks {', '.join(missing)} (bench/results.py says what each holds)")
    if head["schema"] != SCHEMA:
        raise SchemaError(f"{where}: schema {head['schema']!r}, this code reads {SCHEMA!r}")
    if head["speed_index"] is None and not head.get("speed_index_note"):
        raise SchemaError(f"{where}: speed_index is null and speed_index_note does not say why")
    try:
        dt.datetime.strptime(str(head["date"])[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise SchemaError(f"{where}: date {head['date']!r} is not YYYY-MM-DDTHH:MM:SS") from None


def read(path: Path) -> list[Sitting]:
    """A result file's sittings, each checked; SchemaError names the first line that breaks the schema."""
    return list(_sittings(Path(path)))


def _sittings(path: Path) -> Iterator[Sitting]:
    current: Sitting | None = None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SchemaError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise SchemaError(f"{where}: a line must be a JSON object")
            if "schema" in record:
                check_header(record, where)
                if current is not None:
                    yield current
                current = Sitting(record)
            elif current is None:
                raise SchemaError(f"{where}: a row before any header (the first line must be a header)")
            else:
                current.rows.append(record)
    if current is None:
        raise SchemaError(f"{path.name}: no header: an empty result file")
    yield current


def files(folder: Path) -> list[Path]:
    """Every file of a results folder (each must follow the schema: tests/test_results_schema.py)."""
    return sorted(p for p in Path(folder).iterdir() if p.is_file() and not p.name.startswith("."))
