"""bench/pong.py cannot rot: its segment clock by hand, and 55 s of a real run with tiny settings (Ray's start
included: 40 s failed once on a loaded 2-core machine)."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import pong  # the repository root is on pytest's path (pyproject.toml: pythonpath)
from distrl.nets.precision import has_bf16_units

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


def test_plan_puts_the_learner_on_the_gpu_and_leaves_a_core_each_to_shards_learner_and_evaluator():
    gpu, _ = pong.plan(16, gpu=True)
    assert "replay.share_frames" not in gpu  # no memory given: the preset's LZ4 stacks
    big, why = pong.plan(16, gpu=True, memory_gib=128)
    assert big["replay.share_frames"] and not big["replay.compress"] and "each frame stored once, raw" in why
    assert gpu["actors"] + gpu["replay.shards"] + 2 == 16 and gpu["learner.batch_size"] == 512
    # the actors' GPU shares and the learner's fill the one GPU exactly: Ray could place no less, and more would wait
    assert gpu["actors"] * gpu["ray.actor_gpus"] + gpu["ray.learner_gpus"] == pytest.approx(1.0)
    cpu, why = pong.plan(2, gpu=False)
    assert cpu["actors"] == 1 and cpu["ray.learner_gpus"] == 0 and "no GPU" in why and cpu["actor.vector_env"]
    assert cpu["torch_threads"] == 1  # the roles take every core: more learner threads only wait on each other
    assert cpu.get("learner.bf16", False) is has_bf16_units("cpu") and ("bfloat16" in why) is has_bf16_units("cpu")
    # issue 18's other systems: A3C and BA3C with 16 workers, Gorila with the cores left beside 4 shards
    assert pong.plan_others("a3c", 16)[0]["actors"] == pong.plan_others("ba3c", 16)[0]["actors"] == 16
    gorila, _ = pong.plan_others("gorila", 16)
    assert gorila["actors"] == 10 and gorila["ps.shards"] == 4 and gorila["eval_protocol"] == "apex"
    # on a share of the machine (taskset): one worker per core, Gorila on one shard
    assert pong.plan_others("a3c", 5)[0]["actors"] == 5
    assert pong.plan_others("gorila", 6)[0]["actors"] == 3 and pong.plan_others("gorila", 6)[0]["ps.shards"] == 1
    # issue 36's R2D2: Ape-X's layout on the paper's values, no GPU shares for its CPU-only actors
    r2d2, _ = pong.plan_others("r2d2", 16)
    assert r2d2["actors"] + r2d2["replay.shards"] + 2 == 16 and "ray.actor_gpus" not in r2d2


@pytest.mark.learning  # 60 s: in the learning tier, alone, since it runs on a wall-clock budget: beside
@pytest.mark.alone     # another test on 2 cores, Ray's start once took 75 s
def test_a_few_seconds_of_pong_write_the_curve_the_summary_and_the_figure(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "bench.pong", "--cpu", "--budget-s", "55", "--run-dir", str(run_dir),
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
    assert list((run_dir / "checkpoints").glob("ckpt-*.pt"))  # the budget's SIGTERM saved where it stopped
