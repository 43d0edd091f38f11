"""The benches' bookkeeping (bench/runs.py, bench/peers/continuous.py): results kept from an earlier
run are only those of the same budget, a contender's best evaluation is never below its final, and the
throughput benches' window leaves out the warm-up and the stop."""

import json
from pathlib import Path

from bench import runs  # the repository root is on pytest's path (pyproject.toml: pythonpath)
from bench.peers import continuous


def row(wall_s, frames, eval_mean):
    return {"wall_s": wall_s, "frames": frames, "return_mean_10": None, "eval_mean": eval_mean}


def write_results(path: Path, budget_s: float, contenders: dict[str, list[dict]]) -> None:
    with open(path, "w") as f:
        for name, rows in contenders.items():
            f.writelines(json.dumps({"contender": name, **r}) + "\n" for r in rows)
            f.write(json.dumps({"contender": name, "summary": True, "budget_s": budget_s}) + "\n")


def test_earlier_results_of_another_budget_are_left_out_and_named(tmp_path, capsys):
    out = tmp_path / "continuous-HalfCheetah-v5-seed1.jsonl"
    write_results(out, 1200.0, {"sb3-sac": [row(600.0, 30_000, 15.0), row(1200.0, 60_000, 4870.0)]})
    rows, summaries = runs.earlier_results(out, 300.0)
    assert rows == {} and summaries == {}
    assert "sb3-sac's earlier results ran for 1200.0 s, not 300 s" in capsys.readouterr().out
    rows, summaries = runs.earlier_results(out, 1200.0)
    assert [r["eval_mean"] for r in rows["sb3-sac"]] == [15.0, 4870.0] and summaries["sb3-sac"]["budget_s"] == 1200.0


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
