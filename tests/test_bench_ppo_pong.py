"""The PPO peer's collect (issue 59): a finished run's raw lines become a result bench.report reads like
bench.pong's, with interval rates and the first greedy 19 computed by hand here."""

import json

import pytest

from bench import results
from bench.peers import ppo_pong


def _raw(tmp_path):
    rows = [{"contender": "sb3-ppo", "env_id": "ALE/Pong-v5", "seed": 3, "wall_s": 60.0, "frames": 60_000,
             "updates": 300, "return_mean_100": -21.0, "episodes": 4, "eval_mean": None},
            {"contender": "sb3-ppo", "env_id": "ALE/Pong-v5", "seed": 3, "wall_s": 120.0, "frames": 150_000,
             "updates": 780, "return_mean_100": -15.5, "episodes": 9, "eval_mean": 19.5}]
    evaluations = [{"frames": 50_000, "steps": 12_500, "updates": 240, "wall_s": 50.0, "mean": -21.0, "returns": []},
                   {"frames": 100_000, "steps": 25_000, "updates": 500, "wall_s": 100.0, "mean": 19.5, "returns": []}]
    final = {**rows[-1], "wall_s": 130.0, "frames": 160_000, "updates": 800, "eval_mean": None, "final": True,
             "evaluations": evaluations, "stopped": "budget", "eval_s_excluded": 30.0,
             "date": "2026-11-29T15:00:00+00:00", "command": "python -m bench.peers.ppo_pong --seed 3",
             "machine": {"cpu": "test", "commit": "abc"}, "cpus": [0, 1], "torch_threads": 2,
             "schedule_frames": 10_000_000, "env_protocol": {"n_envs": 8}, "eval_protocol": {"episodes": 8},
             "hyperparameters": {"n_steps": 128}}
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(x) + "\n" for x in [*rows, final]))
    return raw


def test_collect_writes_a_pong_shaped_result_with_rates_and_the_first_19(tmp_path):
    out = ppo_pong.collect(_raw(tmp_path), {"index": 0.9}, tmp_path / "bench")
    assert out.name == "atari-pong-ppo-cpu2-seed3.jsonl"
    (sitting,) = results.read(out)
    head = sitting.header
    # the run began 130 s of training plus 30 s of evaluations before its last line's date
    assert head["date"] == "2026-11-29T14:57:20Z" and head["speed_index"] == {"index": 0.9}
    assert head["commit"] == "abc" and head["machine"] == {"cpu": "test", "label": "cpu2"} and head["arch"] == "ppo"
    curve = [r for r in sitting.rows if r["kind"] == "curve"]
    # interval rates: (150,000 - 60,000) / 60 s and (780 - 300) / 60 s; the final line is the last row
    assert [r["env_frames_per_s"] for r in curve] == [1000.0, 1500.0, 1000.0]
    assert [r["learner_updates_per_s"] for r in curve] == [5.0, 8.0, 2.0]
    (summary,) = [r for r in sitting.rows if r["kind"] == "summary"]
    assert summary["time_to_eval_19"] == {"wall_s": 100.0, "frames": 100_000, "updates": 500, "eval_return": 19.5}
    assert summary["frames"] == 160_000 and summary["stopped"] == "budget" and summary["eval_s_excluded"] == 30.0
    assert (tmp_path / "bench" / "figures" / "atari-pong-ppo-cpu2-seed3.png").exists()


def test_collect_refuses_a_run_without_its_final_line(tmp_path):
    raw = _raw(tmp_path)
    raw.write_text("".join(raw.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(SystemExit, match="no final line"):
        ppo_pong.collect(raw, None, tmp_path / "bench")
    assert not (tmp_path / "bench" / "results").exists()
