"""bench/results/ holds results in one schema (bench/results.py): every file reads, and a file that breaks the
schema is named with the line that breaks it."""

import json

import pytest

from bench import results
from bench.runs import ROOT

FOLDER = ROOT / "bench" / "results"


@pytest.mark.parametrize("path", results.files(FOLDER), ids=lambda p: p.name)
def test_every_result_file_reads_and_holds_rows(path):
    assert path.suffix == ".jsonl", f"{path.name}: results are JSON Lines (bench/results.py)"
    sittings = results.read(path)
    assert sum(len(s.rows) for s in sittings) >= 1, f"{path.name}: no row"


def header(**changes) -> dict:
    head = {"schema": results.SCHEMA, "date": "2026-11-28T19:50:00Z", "commit": None,
            "command": "python -m bench.minatar --game Breakout --seed 1", "preset": None, "seed": 1,
            "machine": {"platform": "test"}, "speed_index": None, "speed_index_note": results.NOT_MEASURED}
    head.update(changes)
    return {k: v for k, v in head.items() if v is not ...}


ROW = {"contender": "distrl-apex", "wall_s": 20.7, "frames": 22000, "eval_mean": None}


@pytest.mark.parametrize("lines, line, words", [
    ([ROW, header()], 1, "a row before any header"),
    ([header(command=...), ROW], 1, "lacks command"),
    ([header(speed_index_note=...), ROW], 1, "speed_index is null"),
    ([header(), ROW, "{not json"], 3, "not JSON"),
], ids=["row-before-header", "header-without-command", "null-speed-without-note", "not-json"])
def test_a_file_that_breaks_the_schema_is_named_with_its_line(tmp_path, lines, line, words):
    path = tmp_path / "broken.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    with pytest.raises(results.SchemaError) as raised:
        results.read(path)
    assert f"broken.jsonl:{line}" in str(raised.value) and words in str(raised.value)


def test_write_sitting_and_write_row_read_back_as_written(tmp_path):
    first = header(budget_s=900.0)  # a bench's own header facts ride along
    second = header(date="2026-11-29T08:00:00Z", seed=[1, 2], speed_index={"index": 0.97}, speed_index_note=...)
    rows = [ROW, {**ROW, "wall_s": 35.7, "eval_mean": 12.5}, {"contender": "sb3-dqn", "summary": True, "best": [1, 2.5]}]
    path = tmp_path / "minatar-Toy-seed1.jsonl"
    with open(path, "w") as f:
        results.write_sitting(f, first, rows[:2])
        results.write_sitting(f, second)
        results.write_row(f, rows[2])
    a, b = results.read(path)
    assert (a.header, a.rows) == (first, rows[:2]) and (b.header, b.rows) == (second, rows[2:])
    assert a.contenders() == ["distrl-apex"] and b.speed == 0.97 and a.speed is None and a.day == "2026-11-28"
    with open(tmp_path / "x.jsonl", "w") as f, pytest.raises(results.SchemaError, match="may not hold the key 'schema'"):
        results.write_row(f, {"schema": results.SCHEMA})
