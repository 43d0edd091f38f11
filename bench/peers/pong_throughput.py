"""Comparison 2: training throughput on Pong, distrl Ape-X against SB3 DQN and RLlib DQN.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.pong_throughput [--minutes 10]
     [--contenders ...] [--cores N] [--learning-starts 20000] [--smoke]

Each contender trains on ALE/Pong-v5 with DQN preprocessing (no sticky actions, up to 30 no-op
starts, action repeat 4 with a max over the last two frames, 84x84 greyscale, 4 stacked frames,
rewards clipped) for --minutes of wall time once it is ready to train (SB3: the model built; RLlib:
the algorithm built, its env runner up; distrl: the actors' first calls came back), in its own
process pinned to the same --cores CPUs. Start-up is timed and reported apart.

Reported per contender:
  env frames/s           emulator frames (4 per agent step) per second. No-op and fire steps taken
                         inside a reset are counted by none of the three.
  learner updates/s      gradient steps per second, and replayed transitions/s (updates x batch):
                         the batch sizes differ (Ape-X 512, the peers 32), so compare both.
Each is given over the steady window (from the first record after learning started to the last
record before the stop; this is the headline) and over the whole run from before the library
built anything (start-up and the replay warm-up included).

Every contender starts learning after the same number of agent steps (--learning-starts, 20,000 by
default: the zoo's 100,000 would leave SB3 without a single update for most of a 10-minute CPU
run) and holds at most 100,000 transitions (replay capacity). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.peers import common as K

ENV_ID = "ALE/Pong-v5"
FRAME_SKIP = 4
CAPACITY = 100_000
CONTENDERS = ("distrl-apex", "sb3-dqn", "rllib-dqn")

HYPERPARAMS = {
    "distrl-apex": {
        "source": "distrl preset apex-atari (Horgan et al. 2018), actors=2, runtime=ray",
        "env": "distrl make_env: ALE v5 with frameskip=1, repeat_action_probability=0, AtariPreprocessing "
               "(noop 30, skip 4 with max-pool, 84x84 grey), 4-frame stack, reward clip, life loss as a "
               "bootstrap flag (not an episode end)",
        "actors": 2, "replay": f"prioritized alpha 0.6 beta 0.4, capacity {CAPACITY:,} (paper 2M), deflate-compressed frames",
        "n_step": 3, "double_q": True, "dueling": True, "net": "Nature CNN, dueling 512 heads",
        "batch_size": 512, "optimizer": "centered RMSProp 6.25e-5", "target_update": "2500 updates",
        "exploration": "per-actor epsilon 0.4^(1+7i/(N-1))", "samples_per_insert": "0 (free-running)",
        "torch_threads": "learner: all cores; actors: 1",
    },
    "sb3-dqn": {
        "source": "rl-baselines3-zoo hyperparams/dqn.yml, atari",
        "env": "make_atari_env (AtariWrapper: noop 30, skip 4 with max-pool, episodic life, fire reset, "
               "84x84 grey, reward clip) on ALE v5 frameskip=1 repeat_action_probability=0, VecFrameStack 4",
        "learning_rate": 1e-4, "batch_size": 32, "buffer_size": CAPACITY, "train_freq": 4, "gradient_steps": 1,
        "target_update_interval": 1000, "exploration_fraction": "0.1 of the zoo's 1e7 steps",
        "exploration_final_eps": 0.01, "optimize_memory_usage": False, "policy": "CnnPolicy (Nature CNN)",
        "replay": "uniform (SB3 DQN has no prioritized replay)", "n_step": 1, "double_q": False,
        "dueling": False, "torch_threads": "all cores", "learning_starts": "--learning-starts (zoo: 100,000)",
    },
    "rllib-dqn": {
        "source": "RLlib's example rllib/examples/algorithms/dqn/atari_dqn.py, with Ape-X's components "
                  "(the issue asks for prioritized, n-step 3, dueling, double) and the Nature CNN at 84x84",
        "env": "RLlib's Atari wrappers as wrap_atari_for_new_api_stack(dim=84, framestack=4) builds them (noop 30, "
               "max-pool skip 4, episodic life, fire reset, 84x84 grey, 4-frame stack) on ALE v5 frameskip=1 "
               "repeat_action_probability=0, clip_rewards=True; frames kept uint8 and scaled to [-1, 1) in the "
               "module (NormalizedImageEnv's float32 stacks would take 11 GB at 100k; connector frame stacking "
               "fails with the prioritized episode buffer, which samples without lookback)",
        "replay": f"PrioritizedEpisodeReplayBuffer, capacity {CAPACITY:,}, alpha 0.6, beta 0.4",
        "n_step": 3, "double_q": True, "dueling": True, "lr": 6.25e-5, "train_batch_size_per_learner": 32,
        "target_network_update_freq": 32000, "rollout_fragment_length": 4, "num_env_runners": 1,
        "num_learners": 0, "net": "conv [32,8,4],[64,4,2],[64,3,1] valid, head 512",
        "epsilon": "RLlib default 1.0 -> 0.05 over 10,000 steps", "torch_threads": "driver/learner: all cores",
        "min_sample_timesteps_per_iteration": "200 (DQN default 1000): train() returns often enough to stop on time",
    },
}


def _window(points: list[tuple[float, float, float]], batch: int) -> dict:
    """Rates from (seconds, frames, updates) records: the steady window (first record with updates
    > 0 to the last) and the whole run (from t=0, the library's start)."""
    out: dict = {"records": len(points)}
    if not points:
        return out
    t1, f1, u1 = points[-1]
    out.update({"run_s": round(t1, 1), "frames": int(f1), "updates": int(u1),
                "whole_env_frames_per_s": f1 / t1 if t1 > 0 else None,
                "whole_updates_per_s": u1 / t1 if t1 > 0 else None})
    learning = [p for p in points if p[2] > 0]
    if len(learning) >= 2 and learning[-1][0] > learning[0][0]:
        (a, fa, ua), (b, fb, ub) = learning[0], learning[-1]
        out.update({"steady_s": round(b - a, 1), "env_frames_per_s": (fb - fa) / (b - a),
                    "learner_updates_per_s": (ub - ua) / (b - a),
                    "replayed_per_s": (ub - ua) * batch / (b - a), "learning_started_s": round(a, 1)})
    else:
        out.update({"steady_s": None, "env_frames_per_s": None, "learner_updates_per_s": None,
                    "replayed_per_s": None, "learning_started_s": None,
                    "note": "learning never started inside the run: only whole-run rates"})
    return out


# ------------------------------------------------------------------ distrl

def _distrl(seconds: float, seed: int, learning_starts: int, batch: int, capacity: int) -> dict:
    K.protect_ray()
    from distrl import config as C
    from distrl.architectures import make_architecture
    from distrl.components.monitor import Monitor
    from distrl.runtime import ray as rt

    run_dir = Path(tempfile.mkdtemp(prefix="peers-pong-apex-"))
    cfg = C.build_config("apex", ENV_ID, "apex-atari", overrides={
        "runtime": "ray", "actors": 2, "seed": seed, "max_frames": 10**12, "run_dir": str(run_dir),
        "eval_every": 0, "eval_episodes": 0, "log_every_s": 2.0, "replay.capacity": capacity,
        "replay.min_size": learning_starts, "learner.batch_size": batch})
    monitor = Monitor(run_dir, live=False)  # its clock (metrics.csv wall_s) starts here
    t0 = time.perf_counter()
    arch = make_architecture(cfg)
    (run_dir / "config.json").write_text(C.dumps(cfg))
    stop = {"at": None, "ready": None}

    def hook(state):
        now = time.perf_counter()
        if stop["ready"] is None and state["totals"].get("frames", 0) > 0:
            stop["ready"] = now - t0  # ready: the actors' first calls came back
        if stop["ready"] is None:
            return
        if stop["at"] is None and now - t0 - stop["ready"] >= seconds:
            stop["at"] = monitor.wall_s()
            arch.cfg.max_frames = 0

    try:
        rt.run(arch, run_dir, monitor, hook=hook)
        monitor.close()
        with open(run_dir / "metrics.csv") as f:
            rows = list(csv.DictReader(f))
    finally:
        monitor.close()
        shutil.rmtree(run_dir, ignore_errors=True)  # a scratch run: its metrics rows are read above
    cut = stop["at"] if stop["at"] is not None else float("inf")
    points = [(float(r["wall_s"]), float(r["frames"]), float(r["updates"])) for r in rows if float(r["wall_s"]) <= cut + 0.5]
    return {**_window(points, batch), "batch_size": batch, "startup_s": round(stop["ready"] or 0, 1)}


# ------------------------------------------------------------------ stable-baselines3

def _sb3(seconds: float, seed: int, learning_starts: int, cores: int, capacity: int) -> dict:
    import ale_py
    import gymnasium
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    gymnasium.register_envs(ale_py)
    K.pin_torch_threads(cores)
    t0 = time.perf_counter()
    env = VecFrameStack(make_atari_env(ENV_ID, n_envs=1, seed=seed,
                                       env_kwargs={"frameskip": 1, "repeat_action_probability": 0.0}), 4)
    model = DQN("CnnPolicy", env, seed=seed, device="cpu", verbose=0, buffer_size=capacity, learning_rate=1e-4,
                batch_size=32, learning_starts=learning_starts, target_update_interval=1000, train_freq=4,
                gradient_steps=1, exploration_fraction=0.1, exploration_final_eps=0.01, optimize_memory_usage=False)
    points: list[tuple[float, float, float]] = []

    ready = {"s": None}

    class Clock(BaseCallback):
        def __init__(self):
            super().__init__()
            self.last = 0.0

        def _on_training_start(self) -> None:
            ready["s"] = time.perf_counter() - t0

        def _on_step(self) -> bool:
            now = time.perf_counter() - t0
            done = now - ready["s"] >= seconds
            if now - self.last >= 2.0 or done:
                self.last = now
                points.append((now, FRAME_SKIP * self.num_timesteps, float(model._n_updates)))
            return not done

    model.learn(total_timesteps=10_000_000, callback=Clock())  # the zoo's n_timesteps: its epsilon schedule
    env.close()
    return {**_window(points, 32), "batch_size": 32, "startup_s": round(ready["s"], 1)}


# ------------------------------------------------------------------ RLlib

def rllib_pong_env(_config=None):
    """RLlib's wrap_atari_for_new_api_stack(dim=84, framestack=4) without its NormalizedImageEnv:
    frames stay uint8 (the module scales them), because RLlib's prioritized episode buffer samples
    without a lookback, so frames cannot be stacked in the connectors, and float32 stacks in the env
    would hold 113 KB per step (11 GB at 100k)."""
    import ale_py
    import gymnasium
    from ray.rllib.env.wrappers import atari_wrappers as W

    gymnasium.register_envs(ale_py)
    env = gymnasium.make(ENV_ID, frameskip=1, repeat_action_probability=0.0)
    env = gymnasium.wrappers.TimeLimit(env, max_episode_steps=108_000)
    env = W.WarpFrame(env, dim=84)
    env = W.MaxAndSkipEnv(env, skip=FRAME_SKIP)
    env = W.NoopResetEnv(env, noop_max=30)
    env = W.EpisodicLifeEnv(env)
    if "FIRE" in env.unwrapped.get_action_meanings():
        env = W.FireResetEnv(env)
    return W.FrameStack(env, k=4)


def rllib_uint8_module():
    """RLlib's default DQN module, taking uint8 frames and scaling them to [-1, 1) as RLlib's
    NormalizedImageEnv would (for the online and the target network alike)."""
    from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import DefaultDQNTorchRLModule
    from ray.rllib.core.columns import Columns

    class Uint8DQNModule(DefaultDQNTorchRLModule):
        def _qf_forward_helper(self, batch, encoder, head):
            obs = batch[Columns.OBS]
            if not obs.is_floating_point():
                batch = {**batch, Columns.OBS: obs.float() / 128.0 - 1.0}
            return super()._qf_forward_helper(batch, encoder, head)

    return Uint8DQNModule


def _rllib(seconds: float, seed: int, learning_starts: int, cores: int, capacity: int) -> dict:
    K.protect_ray()
    import ray
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    K.pin_torch_threads(cores)
    t0 = time.perf_counter()
    # RLlib's own Ray, as its examples start it, pinned to --cores (distrl's contender starts its own through
    # distrl.runtime.ray.run; both with distrl's token, K.protect_ray)
    ray.init(num_cpus=max(cores, 2), include_dashboard=False, logging_level="ERROR")
    register_env("peers-pong", rllib_pong_env)
    config = (
        DQNConfig()
        .environment("peers-pong", clip_rewards=True)
        .env_runners(num_env_runners=1, rollout_fragment_length=4)
        .learners(num_learners=0)
        .reporting(min_sample_timesteps_per_iteration=200)  # DQN's 1000: the stop would lag by minutes on a loaded CPU
        .training(
            lr=6.25e-5, n_step=3, double_q=True, dueling=True, train_batch_size_per_learner=32,
            target_network_update_freq=32_000, num_steps_sampled_before_learning_starts=learning_starts,
            replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": capacity,
                                  "alpha": 0.6, "beta": 0.4})
        .rl_module(rl_module_spec=RLModuleSpec(module_class=rllib_uint8_module()),
                   model_config=DefaultModelConfig(
                       conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
                       conv_activation="relu", head_fcnet_hiddens=[512]))
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    ready = time.perf_counter()
    points: list[tuple[float, float, float]] = []
    try:
        while time.perf_counter() - ready < seconds:
            result = algo.train()
            steps = float(result["num_env_steps_sampled_lifetime"])
            trained = result.get("learners", {}).get("__all_modules__", {}).get("num_env_steps_trained_lifetime", 0)
            points.append((time.perf_counter() - t0, FRAME_SKIP * steps, float(trained) / 32))
    finally:
        algo.stop()
        ray.shutdown()
    return {**_window(points, 32), "batch_size": 32, "startup_s": round(ready - t0, 1)}


# ------------------------------------------------------------------ parent

def child(args: argparse.Namespace) -> None:
    K.limit_cores(args.cores)
    s = args.minutes * 60
    c = args.capacity
    run = {"distrl-apex": lambda: _distrl(s, args.seed, args.learning_starts, args.distrl_batch, c),
           "sb3-dqn": lambda: _sb3(s, args.seed, args.learning_starts, args.cores, c),
           "rllib-dqn": lambda: _rllib(s, args.seed, args.learning_starts, args.cores, c)}[args.child]
    K.guarded(run)


def _per_step(r: dict) -> float | None:
    """Replayed transitions per agent step: the replay ratio, which the designs set differently."""
    f, rep = r.get("env_frames_per_s"), r.get("replayed_per_s")
    return rep / (f / FRAME_SKIP) if f and rep is not None else None


def print_table(rows: list[dict]) -> None:
    print(f"\n{'contender':<12} {'env frames/s':>12} {'updates/s':>10} {'replayed/s':>11} {'per step':>8} {'batch':>5} "
          f"{'steady s':>8} {'whole f/s':>10} {'whole upd/s':>11} {'frames':>10} {'startup s':>9}  status")
    for r in rows:
        print(f"{r['contender']:<12} {K.fmt(r.get('env_frames_per_s')):>12} {K.fmt(r.get('learner_updates_per_s'), 2):>10} "
              f"{K.fmt(r.get('replayed_per_s')):>11} {K.fmt(_per_step(r), 2):>8} {K.fmt(r.get('batch_size')):>5} {K.fmt(r.get('steady_s')):>8} "
              f"{K.fmt(r.get('whole_env_frames_per_s')):>10} {K.fmt(r.get('whole_updates_per_s'), 2):>11} "
              f"{K.fmt(r.get('frames')):>10} {K.fmt(r.get('startup_s'), 1):>9}  {r['status']}")
    by = {r["contender"]: r for r in rows if r["status"] == "ok"}
    mine = by.get("distrl-apex")
    if mine:
        print("\nenv frames/s, distrl-apex / peer (targets: >= 3x rllib-dqn, >= 1.5x sb3-dqn; steady window, "
              "whole run in brackets):")
        for peer in ("rllib-dqn", "sb3-dqn"):
            if peer in by:
                def ratio(key, peer=peer):
                    a, b = mine.get(key), by[peer].get(key)
                    return f"{a / b:.2f}" if a and b else "n/a"
                print(f"  vs {peer}: {ratio('env_frames_per_s')} ({ratio('whole_env_frames_per_s')})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0, help="wall time each contender trains")
    ap.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--learning-starts", type=int, default=20_000,
                    help="agent steps (transitions) before learning, the same for every contender")
    ap.add_argument("--capacity", type=int, default=CAPACITY, help="replay capacity of every contender")
    ap.add_argument("--distrl-batch", type=int, default=512, help="Ape-X's learner batch (paper: 512)")
    ap.add_argument("--smoke", action="store_true", help="plumbing check: ~20 s each, learning after 1,000 steps")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    ap.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if args.smoke:
        args.minutes, args.learning_starts = 20 / 60, 1_000

    rows = []
    for name in args.contenders:
        print(f"{name}: {args.minutes:g} min ...", end=" ", flush=True)
        t = time.perf_counter()
        argv = ["--child", name, "--minutes", str(args.minutes), "--cores", str(args.cores), "--seed", str(args.seed),
                "--learning-starts", str(args.learning_starts), "--distrl-batch", str(args.distrl_batch),
                "--capacity", str(args.capacity)]
        out = K.run_child("bench.peers.pong_throughput", argv, args.minutes * 60 + 600, K.child_log("pong", name))
        out = {"contender": name, **out, "hyperparameters": HYPERPARAMS[name], "process_s": round(time.perf_counter() - t, 1)}
        rows.append(out)
        print(out["status"] if out["status"] != "ok" else f"{K.fmt(out.get('env_frames_per_s'))} env frames/s steady, "
              f"{K.fmt(out.get('learner_updates_per_s'), 2)} updates/s (process {out['process_s']} s)")
    print_table(rows)
    settings = {"env": ENV_ID, "minutes": args.minutes, "cores": args.cores, "seed": args.seed,
                "learning_starts": args.learning_starts, "capacity": args.capacity, "distrl_batch": args.distrl_batch,
                "frames": f"emulator frames, {FRAME_SKIP} per agent step", "smoke": args.smoke}
    K.finish("pong", rows, settings, not args.no_write,
             K.figures(rows, "status", "env_frames_per_s", "learner_updates_per_s"), speed=not args.no_speed_index)


if __name__ == "__main__":
    main()
