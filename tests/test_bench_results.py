"""The benches' bookkeeping (bench/runs.py, bench/peers/continuous.py, the sweeps' files): results kept from
an earlier run are only those of the same budget, each in its own sitting (bench/results.py), a contender's
best evaluation is never below its final, and the throughput benches' window leaves out the warm-up and the
stop."""

import sys
from pathlib import Path

from bench import results, runs  # the repository root is on pytest's path (pyproject.toml: pythonpath)
from bench.peers import common, continuous


def row(wall_s, frames, eval_mean):
    return {"wall_s": wall_s, "frames": frames, "return_mean_10": None, "eval_mean": eval_mean}


def head(day: str, command: str = "python -m bench.peers.continuous", seed: int = 1) -> dict:
    return {"schema": results.SCHEMA, "date": f"{day}T10:00:00Z", "commit": None, "command": command,
            "preset": None, "seed": seed, "machine": {"platform": "test"}, "speed_index": None,
            "speed_index_note": results.NOT_MEASURED}


def write_results(path: Path, sittings: list[tuple[dict, float, dict[str, list[dict]]]]) -> None:
    """Sittings of (header, budget, {contender: curve rows}), each contender's summary row after its rows."""
    with open(path, "w") as f:
        for header, budget_s, contenders in sittings:
            results.write_sitting(f, header, [r for name, rows in contenders.items() for r in
                                              [*({"contender": name, **r} for r in rows),
                                               {"contender": name, "summary": True, "budget_s": budget_s}]])


def test_earlier_results_of_another_budget_are_left_out_and_named(tmp_path, capsys):
    out = tmp_path / "continuous-HalfCheetah-v5-seed1.jsonl"
    write_results(out, [(head("2026-11-25"), 1200.0, {"sb3-sac": [row(600.0, 30_000, 15.0), row(1200.0, 60_000, 4870.0)]})])
    assert runs.earlier_results(out, 300.0) == []
    assert "sb3-sac's earlier results ran for 1200.0 s, not 300 s" in capsys.readouterr().out
    (kept,) = runs.earlier_results(out, 1200.0)
    assert kept.header == head("2026-11-25") and kept.contenders() == ["sb3-sac"]
    assert [r["eval_mean"] for r in kept.of("sb3-sac") if not r.get("summary")] == [15.0, 4870.0]


def test_earlier_results_keep_each_contender_in_its_newest_sitting_and_leave_out_the_rerun(tmp_path):
    out = tmp_path / "minatar-Breakout-seed1.jsonl"
    write_results(out, [(head("2026-11-24"), 900.0, {"distrl-apex": [row(15.0, 100, None)], "sb3-dqn": [row(15.0, 90, 1.0)]}),
                        (head("2026-11-25"), 900.0, {"distrl-apex": [row(15.0, 200, 2.0)], "paper-dqn": [row(15.0, 80, 3.0)]})])
    first, second = runs.earlier_results(out, 900.0, rerun=["paper-dqn"])
    # distrl-apex's older rows go with the 24th (its newest is the 25th's); paper-dqn runs again: left out
    assert (first.header["date"], first.contenders()) == ("2026-11-24T10:00:00Z", ["sb3-dqn"])
    assert (second.header["date"], second.contenders()) == ("2026-11-25T10:00:00Z", ["distrl-apex"])
    assert second.of("distrl-apex")[0]["frames"] == 200
    assert runs.earlier_results(tmp_path / "none.jsonl", 900.0) == []


def test_a_peer_comparison_appends_one_sitting_per_run(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["bench/peers/cartpole_solve.py", "--seeds", "1", "2", "--no-speed-index"])
    rows = [{"contender": "sb3-dqn", "seed": s, "status": "ok", "frames_to_solve": 1000 * s} for s in (1, 2)]
    common.write_results("cartpole", rows, {"seeds": [1, 2]}, speed=False)
    common.write_results("cartpole", rows[:1], {"seeds": [1]}, speed=False)
    first, second = results.read(tmp_path / "peers-cartpole.jsonl")
    command = first.header["command"]  # python -m <the module> where run as one, as here the test runner
    assert command.startswith("python ") and command.endswith(" --seeds 1 2 --no-speed-index")
    assert first.header["seed"] == [1, 2] and second.header["seed"] == 1
    assert first.header["speed_index"] is None and first.header["speed_index_note"] == "not measured: --no-speed-index"
    assert [r["frames_to_solve"] for r in first.rows] == [1000, 2000] and first.rows[0]["comparison"] == "cartpole"
    assert "date" not in first.rows[0] and "machine" not in first.rows[0]  # the header's
    assert first.rows[0]["run_id"] != second.rows[0]["run_id"]


def test_a_bench_names_its_command_as_a_reader_types_it(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/x/bench/minatar.py", "--game", "Breakout", "--contenders", "a,b"])
    assert runs.command_line("bench.minatar") == "python -m bench.minatar --game Breakout --contenders a,b"


def test_the_best_evaluation_is_never_below_the_final_one():
    results = {"sb3-td3": [row(100.0, 10_000, 900.0), row(200.0, 20_000, 1647.0), row(300.0, 30_000, 1500.0)],
               "sb3-sac": [row(150.0, 8_000, 15.0), row(300.0, 16_000, 4870.0)],
               "distrl-apex-dpg": [row(60.0, 20_000, None), row(120.0, 40_000, 798.0), row(300.0, 70_000, None)]}
    summary = continuous.summarize(results, 300.0)
    assert (summary["sb3-sac"]["final_eval"], summary["sb3-sac"]["best_eval"]) == (4870.0, 4870.0)
    assert (summary["sb3-td3"]["final_eval"], summary["sb3-td3"]["best_eval"]) == (1500.0, 1647.0)
    assert (summary["distrl-apex-dpg"]["final_eval"], summary["distrl-apex-dpg"]["best_eval"]) == (798.0, 798.0)
    # the better peer's final is SAC's 4,870: TD3 never reached it, SAC at its last row (300 s of 300)
    assert summary["sb3-td3"]["time_to_better_peer"] is None
    assert summary["sb3-sac"]["time_to_better_peer"] == {"wall_s": 300.0, "frames": 16_000}
    assert summary["sb3-sac"]["ratio_to_budget"] == 1.0
    assert summary["sb3-td3"]["eval_last_tenth"] == 1500.0 and summary["distrl-apex-dpg"]["eval_last_tenth"] is None


def test_the_last_tenths_mean_counts_each_evaluation_once():
    rows = [row(w, w * 100, e) for w, e in ((850, 100.0), (905, 100.0), (920, 900.0), (935, 900.0), (950, None),
                                            (980, 300.0), (1000, 300.0))]
    assert continuous.late_mean(rows, 900.0) == (100.0 + 900.0 + 300.0) / 3
    assert continuous.late_mean(rows[:1], 900.0) is None


def test_the_throughput_window_leaves_out_the_warm_up_and_the_rows_after_the_stop(capsys):
    """bench/a3c_throughput.py and bench/ba3c_scaling.py read their figures from these metrics rows."""
    walls, frames, dropped = (1.0, 2.0, 3.0, 4.0, 5.0, 5.5), (100, 300, 500, 700, 900, 950), (0, 1, 2, 3, 4, 4)
    rates = (100.0, 200.0, 200.0, 200.0, 200.0, 100.0)  # each row's since the row before; the last one: the stop
    rows = [{"wall_s": w, "frames": f, "env_frames_per_s": r, "dropped_late": d}
            for w, f, r, d in zip(walls, frames, rates, dropped)]
    steady = runs.window_rates(rows, opened=1.5, counted=("dropped_late",))  # opens at the 2.0 row, ends at 5.0
    assert steady == {"env_frames_per_s": 200.0, "dropped_late_per_s": 1.0, "window_s": 3.0, "steady": True}
    whole = runs.window_rates(rows, opened=None)  # never opened: first row to last, said on stderr
    assert whole["env_frames_per_s"] == (950 - 100) / 4.5 and not whole["steady"]
    assert "no measured window" in capsys.readouterr().err


def test_the_throughput_window_opens_on_the_warm_up_frames_and_stops_the_run_after_it():
    class Cfg:
        log_every_s, max_frames = 1.0, 10**12
    clock = [0.0]
    cfg = Cfg()
    window = runs.Window(cfg, lambda: clock[0], seconds=8.0, warm_frames=1000, max_wait_s=60.0)
    for t, f in ((2.0, 500), (3.0, 1000), (11.9, 9000)):
        clock[0] = t
        window({"totals": {"frames": f}})
    assert window.opened == 3.0 and cfg.max_frames == 10**12  # the window: 8 s and a log period from 3.0
    clock[0] = 12.0
    window({"totals": {"frames": 9100}})
    assert cfg.max_frames == 0  # the driver's loop ends after this tick
    stuck = Cfg()
    never = runs.Window(stuck, lambda: 60.0, seconds=8.0, warm_frames=1000, max_wait_s=60.0)
    never({"totals": {"frames": 0}})
    assert never.opened is None and stuck.max_frames == 0


def test_the_scaling_row_marks_each_fraction_of_the_budget_with_the_latest_evaluation_before_it():
    from bench import dpg_scaling
    rows = [{"wall_s": 10.0, "frames": 1000, "updates": 50, "eval_mean": None},
            {"wall_s": 30.0, "frames": 3000, "updates": 200, "eval_mean": 100.0},
            {"wall_s": 60.0, "frames": 6000, "updates": 500, "eval_mean": 400.0},
            {"wall_s": 100.0, "frames": 9000, "updates": 800, "eval_mean": 300.0}]
    row = dpg_scaling.row(4, rows, budget_s=100.0)
    # a quarter (25 s): nothing evaluated yet; half (50 s): the 30 s evaluation; all: the last one
    assert (row["eval_at_0.25"], row["eval_at_0.5"], row["eval_at_1.0"]) == (None, 100.0, 300.0)
    assert row["best_eval"] == 400.0 and row["frames_per_s"] == 90.0 and row["updates_per_s"] == 8.0
    assert dpg_scaling.time_to(row["curve"], 300.0) == 60.0  # the first at or above, not the last
    assert dpg_scaling.time_to(row["curve"], 401.0) is None and dpg_scaling.time_to(row["curve"], None) is None
