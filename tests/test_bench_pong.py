"""bench/pong.py cannot rot: its segment clock by hand, and 75 s of a real run with tiny settings (Ray's start
included: 40 s failed once on a loaded 2-core machine)."""

import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_pong", ROOT / "bench" / "pong.py")
pong = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pong)


def test_segments_split_where_distrl_clock_restarts_and_sit_end_to_end():
    rows = [{"wall_s": w} for w in ("5", "15", "25", "4", "14")]
    assert [[r["wall_s"] for r in s] for s in pong.split_segments(rows)] == [["5", "15", "25"], ["4", "14"]]
    meta = {"segments": [{"started": 100.0, "launched": 101.0, "monitor_start": 103.0, "ended": 130.0},
                         {"started": 500.0, "launched": 500.5, "ended": 520.0}]}
    # segment 1 starts 3 s in; segment 2 after segment 1's 30 s, at its launch (no recorded start): 30.5
    assert pong.offsets(meta) == [3.0, 30.5]


def test_plan_puts_the_learner_on_the_gpu_and_leaves_a_core_each_to_shards_learner_and_evaluator():
    gpu, _ = pong.plan(16, gpu=True)
    assert gpu["actors"] + gpu["replay.shards"] + 2 == 16 and gpu["learner.batch_size"] == 512
    cpu, why = pong.plan(2, gpu=False)
    assert cpu["actors"] == 1 and cpu["ray.learner_gpus"] == 0 and "no GPU" in why
    # issue 18's other systems: A3C and BA3C with 16 workers, Gorila with the cores left beside 4 shards
    assert pong.plan_others("a3c", 16)[0]["actors"] == pong.plan_others("ba3c", 16)[0]["actors"] == 16
    gorila, _ = pong.plan_others("gorila", 16)
    assert gorila["actors"] == 10 and gorila["ps.shards"] == 4 and gorila["eval_protocol"] == "apex"
    # on a share of the machine (taskset): one worker per core, Gorila on one shard
    assert pong.plan_others("a3c", 5)[0]["actors"] == 5
    assert pong.plan_others("gorila", 6)[0]["actors"] == 3 and pong.plan_others("gorila", 6)[0]["ps.shards"] == 1


def test_a_few_seconds_of_pong_write_the_curve_the_summary_and_the_figure(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "bench" / "pong.py"), "--cpu", "--budget-s", "75", "--run-dir", str(run_dir),
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
