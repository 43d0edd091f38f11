"""stop_return and max_seconds: a run ends at its first periodic evaluation that reaches the bar, or
when its wall-clock budget is spent, and says which."""

import csv
import json
import math

import pytest

from distrl import config as C
from distrl.cli import main
from distrl.errors import ConfigError
from distrl.training import train


def _evaluations(run):
    with open(run / "evaluations.csv") as f:
        return [float(r["eval_return_mean"]) for r in csv.DictReader(f)]


def ba3c(run, **overrides):
    return C.build_config("ba3c", "CartPole-v1", overrides={
        "max_frames": 50_000, "seed": 3, "run_dir": str(run), "eval_episodes": 2, "eval_every": 5,
        "log_every_s": 1e-6, "checkpoint_every": 10**9, **overrides})


def test_the_first_evaluation_at_the_bar_ends_the_run_and_the_final_one_scores_the_same(tmp_path):
    """Every CartPole episode scores at least 8, so the first periodic evaluation reaches -1. Inline, the
    stop comes before another update and the evaluator's episodes are seeded alike: the final evaluation
    is of the same parameters and gives the same mean."""
    summary = train(ba3c(tmp_path / "run", stop_return=-1), live=False)
    reached = summary["stopped_at_return"]
    assert reached is not None and reached["return_mean"] >= 8
    assert summary["frames"] < 5_000 and summary["periodic_evaluations"] == 1
    periodic, final = _evaluations(tmp_path / "run")
    assert periodic == final == reached["return_mean"] == summary["eval_return_mean"]


def test_a_bar_never_reached_runs_to_max_frames(tmp_path):
    summary = train(ba3c(tmp_path / "run", max_frames=1500, stop_return=10_000), live=False)
    assert summary["stopped_at_return"] is None and summary["frames"] >= 1500
    assert summary["periodic_evaluations"] >= 1 and summary["stopped_by"] == "max_frames"


def test_a_spent_wall_clock_budget_ends_training_then_saves_and_evaluates(tmp_path):
    """A budget of a millisecond is spent by the first tick: the run stops far short of max_frames, says
    why, and still writes its checkpoint and final evaluation."""
    summary = train(ba3c(tmp_path / "run", max_seconds=1e-3), live=False)
    assert summary["stopped_by"] == "max_seconds" and 0 < summary["frames"] < 50_000
    assert summary["eval_episodes"] == 2 and list((tmp_path / "run" / "checkpoints").glob("ckpt-*"))
    assert json.loads((tmp_path / "run" / "config.json").read_text())["max_seconds"] == 1e-3


@pytest.mark.parametrize("text, seconds", [("1200", 1200.0), ("90s", 90.0), ("20m", 1200.0), ("1.5h", 5400.0),
                                           ("1h30m", 5400.0), ("2m30s", 150.0)])
def test_max_time_reads_durations(text, seconds):
    from distrl.cli import build_parser
    args = build_parser().parse_args(["train", "dqn", "--env", "CartPole-v1", "--max-time", text])
    assert args.max_seconds == seconds


@pytest.mark.parametrize("text", ["", "20x", "m", "0", "0m", "20 minutes"])
def test_a_bad_max_time_is_one_clear_error(text, capsys):
    assert main(["train", "dqn", "--env", "CartPole-v1", "--max-time", text]) != 0
    assert "expects a duration" in capsys.readouterr().err


def test_the_cli_flag_stops_the_run_and_config_json_stays_standard_json(tmp_path):
    run = tmp_path / "run"
    assert main(["train", "ba3c", "--env", "CartPole-v1", "--max-frames", "50000", "--seed", "3", "--quiet",
                 "--stop-return", "-1", "--run-dir", str(run), "--set", "eval_every=5", "--set", "eval_episodes=2",
                 "--set", "log_every_s=1e-6"]) == 0
    assert json.loads((run / "summary.json").read_text())["stopped_at_return"] is not None
    saved = json.loads((run / "config.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert saved["stop_return"] == -1.0
    default = json.loads(C.dumps(C.build_config("ba3c", "CartPole-v1")), parse_constant=lambda c: pytest.fail(c))
    assert default["stop_return"] == "inf" and C.from_dict(default).stop_return == math.inf


@pytest.mark.parametrize("overrides, words", [
    ({"stop_return": 400, "eval_every": 0}, "eval_every and eval_episodes"),
    ({"stop_return": 400, "eval_episodes": 0}, "eval_every and eval_episodes"),
    ({"stop_return": "nan"}, "a number, or inf"),
])
def test_a_bar_the_run_cannot_check_is_refused(overrides, words):
    with pytest.raises(ConfigError, match="stop_return") as err:
        C.build_config("ba3c", "CartPole-v1", overrides=overrides)
    assert words in str(err.value)
