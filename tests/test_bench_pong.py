"""bench/pong.py cannot rot: its segment clock by hand, and 35 s of a real run with tiny settings (Ray's start
included: 40 s failed once beside another test on 2 cores; alone, its first row came at 9.5 s)."""

import argparse
import csv
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bench import pong, results  # the repository root is on pytest's path (pyproject.toml: pythonpath)

ROOT = Path(__file__).resolve().parent.parent


def test_segments_split_where_distrl_clock_restarts_and_sit_end_to_end():
    rows = [{"wall_s": w} for w in ("5", "15", "25", "4", "14")]
    assert [[r["wall_s"] for r in s] for s in pong.split_segments(rows)] == [["5", "15", "25"], ["4", "14"]]
    meta = {"segments": [{"started": 100.0, "launched": 101.0, "monitor_start": 103.0, "ended": 130.0},
                         {"started": 500.0, "launched": 500.5, "ended": 520.0}]}
    # segment 1 starts 3 s in; segment 2 after segment 1's 30 s, at its launch (no recorded start): 30.5
    assert pong.offsets(meta) == [3.0, 30.5]


def test_curve_keeps_every_evaluation_of_every_segment_even_one_after_the_last_metrics_row(tmp_path):
    """The device run of 2026-11-26 lost its last evaluation (21.0), finished 3.6 s after the last row."""
    metrics = [("10", "1000", "5"), ("20", "2000", "9"), ("5", "2100", "12"), ("15", "3000", "20")]
    with open(tmp_path / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_s", "frames", "updates", "episode_return_mean"])
        w.writerows([(*m, "-20") for m in metrics])
    evals = [("12", "6", "-21"), ("8", "14", "15"), ("18", "22", "21")]  # segment 2's last comes after its 15 s row
    with open(tmp_path / "evaluations.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_s", "updates", "eval_return_mean"])
        w.writerows(evals)
    meta = {"segments": [{"started": 0.0, "launched": 0.0, "monitor_start": 1.0, "ended": 25.0},
                         {"started": 100.0, "launched": 100.0, "monitor_start": 102.0, "ended": 120.0}]}
    curve, points = pong.build_curve(tmp_path, meta)
    # offsets 1 and 25 + 2 = 27; each evaluation carries the frames of the row before it
    assert points == [{"wall_s": 13.0, "frames": 1000, "updates": 6, "eval_return": -21.0},
                      {"wall_s": 35.0, "frames": 2100, "updates": 14, "eval_return": 15.0},
                      {"wall_s": 45.0, "frames": 3000, "updates": 22, "eval_return": 21.0}]
    assert [r["wall_s"] for r in curve] == [11.0, 21.0, 32.0, 42.0]


def test_an_evaluation_is_also_placed_at_the_minute_of_the_parameters_it_scored():
    """The 2-core run of 2026-11-28 reported 19 at 68.4 minutes for parameters the learner had at 67.8."""
    from bench.runs import params_wall_s
    curve = [{"wall_s": 60.0, "updates": 0}, {"wall_s": 120.0, "updates": 600}, {"wall_s": 180.0, "updates": 600},
             {"wall_s": 240.0, "updates": 1800}]
    assert params_wall_s(curve, 0) == 60.0
    assert params_wall_s(curve, 150) == 75.0  # a quarter of the way from 60 s to 120 s
    assert params_wall_s(curve, 600) == 120.0  # first reached at 120 s, not when the count stood still
    assert params_wall_s(curve, 1500) == 225.0  # 180 + 60 * 900 / 1200
    assert params_wall_s(curve, 1801) is None


def test_evaluations_after_the_run_sit_where_the_learner_had_their_parameters(tmp_path):
    curve = [{"wall_s": 60.0, "frames": 1000, "updates": 0}, {"wall_s": 120.0, "frames": 5000, "updates": 2000},
             {"wall_s": 180.0, "frames": 9000, "updates": 4000}]
    rows = [{"checkpoint": "ckpt-0000004000.pt", "updates": "4000", "eval_return_mean": "3.5"},  # finished first
            {"checkpoint": "ckpt-0000001000.pt", "updates": "1000", "eval_return_mean": "-20.0"},
            {"checkpoint": "ckpt-0000004100.pt", "updates": "4100", "eval_return_mean": "4.0"}]  # past the curve
    halfway = {"wall_s": 90.0, "frames": 1000, "updates": 1000, "eval_return": -20.0, "params_wall_s": 90.0}
    last_row = {"wall_s": 180.0, "frames": 9000, "updates": 4000, "eval_return": 3.5, "params_wall_s": 180.0}
    assert pong.after_points(curve, rows) == [halfway, last_row]  # halfway from 60 s to 120 s
    # the stop's checkpoint, past the last row, sits at the run's end: the latest its parameters can be
    stop = {"wall_s": 200.0, "frames": 9000, "updates": 4100, "eval_return": 4.0, "params_wall_s": 200.0}
    assert pong.after_points(curve, rows, stops={4100: 200.0}) == [halfway, last_row, stop]
    # resumed from that stop: the next segment's first rows come after a restart and a refill, and count 4,090
    # (a resumed learner's first rows may lag its checkpoint's name); the stop still sits at its segment's end
    resumed = curve + [{"wall_s": 230.0, "frames": 9000, "updates": 4090}, {"wall_s": 290.0, "frames": 9500,
                                                                           "updates": 4110}]
    assert pong.after_points(resumed, rows, stops={4100: 200.0}) == [halfway, last_row, stop]
    assert pong.after_points(resumed, rows)[-1]["wall_s"] == 260.0  # else: halfway up the next segment's rows
    meta = {"segments": [{"started": 1000.0, "ended": 1150.0}, {"started": 5000.0, "ended": 5050.5}]}
    assert pong.segment_ends(meta) == [150.0, 200.5]  # the 3,850 s between the segments left out
    # each segment's stop is the newest checkpoint written while it ran, by the files' times
    for name, t in (("ckpt-0000002000.pt", 1100.0), ("ckpt-0000004100.pt", 1149.0), ("ckpt-0000006000.pt", 5040.0),
                    ("ckpt-0000006500.pt", 5050.0)):
        path = tmp_path / "checkpoints" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"")
        os.utime(path, (t, t))
    assert pong.segment_stops(tmp_path, meta) == {4100: 150.0, 6500: 200.5}
    assert pong.after_the_run(2000) == {"eval_episodes": 0, "keep_checkpoints": 0, "checkpoint_every": 2000}


def test_each_kept_checkpoint_is_evaluated_once_after_the_run(tmp_path):
    from distrl import config as C
    from distrl.training import train
    run = tmp_path / "run"
    train(C.build_config("apex", "CartPole-v1", overrides={
        "replay.min_size": 200, "checkpoint_every": 100, "eval_episodes": 0, "keep_checkpoints": 0, "seed": 3,
        "max_frames": 1200, "log_every_s": 0.2, "run_dir": str(run)}), live=False)
    kept = sorted(p.name for p in (run / "checkpoints").glob("ckpt-*.pt"))
    rows = pong.evaluate_after(run, 2)
    assert sorted(r["checkpoint"] for r in rows) == kept and len(kept) >= 2
    assert all(int(r["updates"]) == int(r["checkpoint"][5:15]) and r["episodes"] == "8" for r in rows)
    assert pong.evaluate_after(run, 2) == rows  # none again


def test_plan_others_sizes_the_other_systems_from_the_cores():
    # issue 18's other systems: A3C and BA3C with 16 workers, Gorila with the cores left beside 4 shards
    assert pong.plan_others("a3c", 16)[0]["actors"] == pong.plan_others("ba3c", 16)[0]["actors"] == 16
    gorila, _ = pong.plan_others("gorila", 16)
    assert gorila["actors"] == 10 and gorila["ps.shards"] == 4 and gorila["eval_protocol"] == "apex"
    # on a share of the machine (taskset): one worker per core, Gorila on one shard
    assert pong.plan_others("a3c", 5)[0]["actors"] == 5
    assert pong.plan_others("gorila", 6)[0]["actors"] == 3 and pong.plan_others("gorila", 6)[0]["ps.shards"] == 1
    # 2 cores: two bundles, not one (a bundle's actor waits on its own learner), on the small-machine preset
    assert pong.plan_others("gorila", 2)[0]["actors"] == 2 and pong.PRESETS["gorila"] == "gorila-atari-small"
    # each system's evaluations about a minute apart in its own counter: Ape-X's 1,000 updates took 69 s on 2 cores
    assert [pong.plan_others(a, 2)[0]["eval_every"] for a in ("a3c", "ba3c", "gorila")] == [3000, 100, 1000]
    assert pong.plan_others("a3c", 16)[0]["eval_every"] == 24_000 and pong.plan_others("r2d2", 2)[0]["eval_every"] == 1000
    # BA3C on Pong takes the paper's Pong epsilon (1e-3), on other games its table's (the preset's 1e-8)
    assert pong.plan_others("ba3c", 2)[0]["learner.eps"] == 1e-3
    assert "learner.eps" not in pong.plan_others("ba3c", 2, "ALE/Breakout-v5")[0]
    assert "learner.eps" not in pong.plan_others("a3c", 2)[0]
    # issue 36's R2D2: Ape-X's layout on the paper's values, no GPU shares for its CPU-only actors
    r2d2, _ = pong.plan_others("r2d2", 16)
    assert r2d2["actors"] + r2d2["replay.shards"] + 2 == 16 and "ray.actor_gpus" not in r2d2


def test_result_names_come_from_the_runs_own_game_arch_machine_and_tag():
    meta = {"game": "ALE/Breakout-v5", "arch": "apex", "seed": 3, "machine": "cpu2"}
    assert pong.result_name(meta) == "atari-breakout-cpu2-seed3"  # Ape-X's files keep their names without the arch
    assert pong.result_name({**meta, "arch": "a3c", "tag": "elu"}) == "atari-breakout-a3c-cpu2-elu-seed3"
    assert pong.result_name({**meta, "game": "ALE/Pong-v5", "machine": "gpu", "tag": "h200"}) == "atari-pong-gpu-h200-seed3"


def test_a_tag_that_would_not_be_a_plain_file_name_is_refused_before_anything_runs(tmp_path):
    for bad in ("../x", "a b", "-x"):
        out = subprocess.run([sys.executable, "-m", "bench.pong", f"--tag={bad}", "--run-dir", str(tmp_path / "r")],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "--tag" in out.stderr and not (tmp_path / "r").exists()


def test_the_result_is_one_sitting_whose_header_holds_the_first_segments_command_speed_index_commit_and_cpu():
    meta = {"game": "ALE/Pong-v5", "arch": "a3c", "seed": 2, "machine": "cpu2", "cores": 2, "plan": {"actors": 2},
            "segments": [{"started": 0.0, "launched": 1.0, "ended": 10.0, "command": "python -m bench.pong --arch a3c",
                          "speed_index": {"index": 0.9}, "commit": "a" * 40, "cpu_model": "AMD EPYC 9R14"},
                         {"started": 20.0, "launched": 21.0, "ended": 30.0, "command": "python -m bench.pong --resume",
                          "speed_index": None, "commit": "b" * 40, "cpu_model": "Intel(R) Xeon(R) Processor"}]}
    args = argparse.Namespace(no_speed_index=False, collect=True)
    head = pong.sitting_header(meta, args)
    results.check_header(head, "the test's header")
    assert head["command"] == "python -m bench.pong --arch a3c" and head["date"] == "1970-01-01T00:00:00Z"
    assert head["speed_index"] == {"index": 0.9} and "speed_index_note" not in head
    assert (head["preset"], head["seed"], head["machine"]["label"], head["plan"]) == ("a3c-atari", 2, "cpu2", {"actors": 2})
    # the training's commit and CPU, not the collection's: a resume on another commit or CPU says so in its entry
    assert head["commit"] == "a" * 40 and head["machine"]["cpu_model"] == "AMD EPYC 9R14"
    assert head["resumed"] == [{"command": "python -m bench.pong --resume", "speed_index": None,
                                "commit": "b" * 40, "cpu_model": "Intel(R) Xeon(R) Processor"}]
    summary = {"game": "ALE/Pong-v5", "arch": "a3c", "seed": 2, "machine": "cpu2", "cores": 2, "plan": {},
               "wall_s": 9.0, "frames": 100, "best_eval": None}
    assert pong.figures(summary) == {"wall_s": 9.0, "frames": 100, "best_eval": None}  # the rest is the header's
    unmeasured = pong.sitting_header({**meta, "segments": [{"started": 0.0, "launched": 0.0}]}, args)
    assert unmeasured["speed_index"] is None and unmeasured["speed_index_note"].startswith("not measured")
    older = pong.sitting_header({**meta, "segments": [{"started": 0.0, "launched": 0.0, "command": "c"}]}, args)
    assert older["commit"] == results.header("c", speed=False)["commit"]  # a run before segments recorded it


@pytest.mark.learning  # 40 s: in the learning tier, alone, since it runs on a wall-clock budget: beside
@pytest.mark.alone     # another test on 2 cores, Ray's start once took 75 s
def test_a_few_seconds_of_pong_write_the_curve_the_summary_and_the_figure(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "bench.pong", "--cpu", "--budget-s", "35", "--no-speed-index", "--run-dir", str(run_dir),
           "--out-root", str(tmp_path / "out"), "--set", "replay.min_size=300", "--set", "learner.batch_size=16",
           "--set", "replay.capacity=2000", "--set", "eval_episodes=1", "--set", "eval_every=20",
           "--set", "log_every_s=2", "--set", "max_episode_frames=2000"]
    subprocess.run(cmd, check=True, cwd=ROOT, timeout=400, capture_output=True)
    with open(run_dir / "curve.csv", newline="") as f:
        curve = list(csv.DictReader(f))
    assert curve and int(curve[-1]["frames"]) > 0 and float(curve[0]["wall_s"]) > 0
    summary = json.loads((run_dir / "bench-summary.json").read_text())
    assert summary["machine"].startswith("cpu") and summary["plan"]["actors"] >= 1 and summary["frames"] > 0
    assert (tmp_path / "out" / "figures" / f"atari-pong-{summary['machine']}-seed1.png").exists()
    (sitting,) = results.read(tmp_path / "out" / "results" / f"atari-pong-{summary['machine']}-seed1.jsonl")
    assert sitting.header["command"].startswith("python -m bench.pong --cpu") and sitting.header["seed"] == 1
    assert sitting.header["machine"]["label"] == summary["machine"] and sitting.header["plan"] == summary["plan"]
    assert [r["kind"] for r in sitting.rows].count("curve") == len(curve) and sitting.rows[-1]["kind"] == "summary"
    assert sitting.rows[-1]["frames"] == summary["frames"]
    assert list((run_dir / "checkpoints").glob("ckpt-*.pt"))  # the budget's SIGTERM saved where it stopped


def test_the_role_window_is_kept_in_its_segment_and_the_summary_only_where_the_run_outlived_it(monkeypatch):
    monkeypatch.setattr(pong.role_cpu, "window", lambda seconds: ({"LearnerWorker": 0.9, "ActorWorker": 0.5}, 0.86,
                                                                   seconds))
    segment = {"started": time.time() - 100.0}
    pong.watch_roles(segment, 30.0, 2.0, threading.Event())  # 30 s into a segment 100 s old: at once
    assert segment["role_cpu"]["cores"] == {"LearnerWorker": 0.9, "ActorWorker": 0.5}
    assert segment["role_cpu"]["machine_busy"] == 0.86 and segment["role_cpu"]["window_s"] == 2.0
    assert 97.0 <= segment["role_cpu"]["at_s"] <= 99.0  # when the window began, on the segment's clock
    stopped = threading.Event()
    stopped.set()  # the run ended before the window's minute: nothing is kept
    later = {"started": time.time()}
    pong.watch_roles(later, 60.0, 2.0, stopped)
    assert "role_cpu" not in later
    meta = {"game": "ALE/Pong-v5", "seed": 1, "machine": "cpu2", "plan": {}, "segments": [segment, later]}
    assert pong.summarise([], [], meta, [], 19.0)["role_cpu"] == [segment["role_cpu"]]
