"""The races' bookkeeping (bench/runs.py, bench/peers/continuous.py): results kept from an earlier
run are only those of the same budget, and a contender's best evaluation is never below its final."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# continuous.py puts bench/ and bench/peers/ on sys.path for its helpers; bench/minatar.py would then
# hide the minatar package from every later test in this process, so the path is put back.
saved_path = list(sys.path)
continuous = load("bench_continuous", ROOT / "bench" / "peers" / "continuous.py")
runs = load("bench_runs", ROOT / "bench" / "runs.py")
sys.path[:] = saved_path


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
