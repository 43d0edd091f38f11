"""Comparison 1: wall time and frames until CartPole-v1 is solved, distrl against SB3 and RLlib.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.cartpole_solve [--seeds 1 2 3]
     [--contenders ...] [--max-frames 200000] [--cores N] [--smoke]

Every contender is evaluated the same way (common.PeriodicEval): the first time its env-frame count
reaches each multiple of 5,000, its current greedy policy plays 10 episodes on a separate
CartPole-v1 env reset with seed+1000; the run is solved at the first evaluation whose mean is
>= 475, and stops there. Reported: frames and wall seconds at that snapshot. The clock starts before
the library builds anything (Ray start-up and process creation count) and leaves out evaluation
time, during which each contender's training is paused:

  SB3, RLlib  synchronous: training waits for the callback / for the driver between iterations.
  distrl      the driver waits for the benchmark's hook: it starts no call meanwhile, so the Ape-X
              learner ends its call in flight (at most 50 updates) and the actors theirs; Gorila
              bundles finish their in-flight call (at most 25 rounds of 4 steps and 2 updates each)
              during the evaluation. The inline runtime (distrl-apex-inline, the embedded default)
              is synchronous.

Frames are env steps summed over all actors (CartPole has no frame skip). A run that has not solved
by --max-frames counts as unsolved. Each (contender, seed) runs in its own process, pinned to the
same --cores CPUs. Prints figures only and asserts nothing about times.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.peers import common as K

ENV_ID = "CartPole-v1"
CONTENDERS = ("distrl-apex", "distrl-apex-inline", "distrl-gorila", "sb3-dqn", "rllib-dqn")
DISTRL = ("distrl-apex", "distrl-apex-inline", "distrl-gorila")

# Each contender's hyperparameters, and why they are the nearest equivalent. distrl runs its own
# CartPole presets (src/distrl/config.py) with 2 actors; the peers run their libraries' published
# CartPole-v1 DQN settings, prioritized replay for RLlib as the issue asks. None was tuned here.
HYPERPARAMS = {
    "distrl-apex": {
        "source": "distrl preset apex-cartpole (src/distrl/config.py), actors=2, runtime=ray",
        "actors": 2, "replay": "prioritized, capacity 20k, alpha 0.6, beta 0.4, min_size 1000",
        "n_step": 3, "double_q": True, "dueling": True, "net": "MLP 128,128", "batch_size": 64,
        "optimizer": "Adam 1e-3", "loss": "huber", "target_update": "50 updates",
        "exploration": "Ape-X per-actor epsilon 0.4^(1+7i/(N-1))", "samples_per_insert": 16,
    },
    "distrl-apex-inline": {
        "source": "distrl preset apex-cartpole (src/distrl/config.py), actors=2, runtime=inline (the embedded "
                  "default: every component in one process, stepped in turn)",
        "actors": 2, "replay": "as distrl-apex", "n_step": 3, "double_q": True, "dueling": True,
        "net": "MLP 128,128", "batch_size": 64, "optimizer": "Adam 1e-3", "target_update": "50 updates",
        "per_round": "each actor 4 steps, then 4 updates (32 samples per insert)",
    },
    "distrl-gorila": {
        "source": "distrl preset gorila-cartpole (src/distrl/config.py), 2 bundles, runtime=ray",
        "bundles": 2, "replay": "uniform per bundle, capacity 100k, min_size 1000", "n_step": 1,
        "double_q": False, "dueling": False, "net": "MLP 128,128", "batch_size": 128,
        "optimizer": "Adam 1e-3 on 2 parameter shards", "target_update": "256 global updates",
        "exploration": "epsilon 1 -> 0.04 over 4000 global updates", "updates_per_4_steps": 2,
    },
    "sb3-dqn": {
        "source": "rl-baselines3-zoo hyperparams/dqn.yml, CartPole-v1 (\"Almost Tuned\")",
        "learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
        "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
        "exploration": "1.0 -> 0.04 over the zoo's first 8,000 steps (0.16 of its 5e4 n_timesteps; "
                       "exploration_fraction rescaled to the frame cap so the schedule is the zoo's)",
        "net_arch": [256, 256], "replay": "uniform (SB3 DQN has no prioritized replay)", "n_step": 1,
        "double_q": False, "dueling": False, "n_envs": 1,
    },
    "rllib-dqn": {
        "source": "RLlib's own example rllib/examples/algorithms/dqn/cartpole_dqn.py (new API stack)",
        "lr": 5e-4, "train_batch_size_per_learner": 32,
        "replay": "PrioritizedEpisodeReplayBuffer, capacity 50k, alpha 0.6, beta 0.4",
        "n_step": "(2, 5) sampled per batch", "double_q": True, "dueling": True,
        "epsilon": "1.0 -> 0.02 over 25,000 steps", "net": "256 tanh, head 256",
        "num_env_runners": 0, "num_learners": 0, "rollout_fragment_length": "auto (5)",
    },
}


# ------------------------------------------------------------------ distrl

def _distrl(arch_name: str, seed: int, max_frames: int, threshold: float, runtime: str = "ray") -> dict:
    K.protect_ray()
    import numpy as np
    import ray
    import torch

    from distrl import config as C
    from distrl.architectures import make_architecture
    from distrl.components.monitor import Monitor
    from distrl.runtime import inline
    from distrl.runtime import ray as ray_runtime
    from distrl.runtime.ray.cluster import call

    run_dir = Path(tempfile.mkdtemp(prefix=f"peers-{arch_name}-seed{seed}-"))
    preset = f"{arch_name}-cartpole"
    cfg = C.build_config(arch_name, ENV_ID, preset, overrides={
        "runtime": runtime, "actors": 2, "seed": seed, "max_frames": max_frames, "run_dir": str(run_dir),
        "eval_every": 0, "eval_episodes": 0})  # evaluation is the benchmark's, from outside
    ev = K.PeriodicEval(seed, threshold=threshold)  # the clock starts before anything of the run is built
    arch = make_architecture(cfg)
    (run_dir / "config.json").write_text(C.dumps(cfg))
    net = arch.make_net().eval()
    paused = {"ok": None}

    def act(obs):
        with torch.no_grad():
            return int(net(torch.as_tensor(obs)[None]).argmax(1)[0])

    def apex_snapshot(state):
        """The driver waits for the hook: the learner ends its call in flight and gets no other."""
        paused["ok"] = "after its call in flight (at most 50 updates)"
        ref, version = ray.get(call(state["learner"][0], "params"))
        net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in ray.get(ref[0]).items()})
        return act, {"updates": int(version)}

    def gorila_snapshot(state):
        from distrl.params.param_server import ShardedParameterServer
        ps = ShardedParameterServer(state["ps"], call, ray.get, sizes=arch.shard_sizes())
        flat, versions = ps.pull()
        net.load_state_dict(arch.params(flat))
        return act, {"updates": int(versions.min())}

    def inline_snapshot(state):
        net.load_state_dict(state["learner"][0].latest()[0])
        return act, {"updates": int(state["learner"][0].updates)}

    def hook(state):  # first called once every component exists and the driver loop runs
        ev.ready()
        if runtime == "inline":
            solved = ev.maybe_eval(int(state["totals"]["frames"]), lambda: inline_snapshot(state))
            if solved:
                arch.cfg.max_frames = 0
            return
        frames = int(state["totals"].get("frames", 0))
        if arch_name == "apex":
            solved = ev.maybe_eval(frames, lambda: apex_snapshot(state))
        else:
            solved = ev.maybe_eval(frames, lambda: gorila_snapshot(state))
        if solved:
            arch.cfg.max_frames = 0  # the driver's loop ends after this tick

    monitor = Monitor(run_dir, live=False)
    try:
        out = (inline if runtime == "inline" else ray_runtime).run(arch, run_dir, monitor, hook=hook)
    finally:
        monitor.close()
        shutil.rmtree(run_dir, ignore_errors=True)  # a scratch run: the benchmark records what it needs
    return {**ev.result(), "total_frames": out["frames"], "total_updates": out["updates"],
            "learner_paused_during_eval": "yes (synchronous)" if runtime == "inline" else paused["ok"]
            if arch_name == "apex" else "no (bundles finish their call)"}


# ------------------------------------------------------------------ stable-baselines3

def _sb3(seed: int, max_frames: int, threshold: float) -> dict:
    import gymnasium
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback

    K.pin_torch_threads(1)
    ev = K.PeriodicEval(seed, threshold=threshold)
    env = gymnasium.make(ENV_ID)
    model = DQN("MlpPolicy", env, seed=seed, device="cpu", verbose=0,
                learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000, gamma=0.99,
                target_update_interval=10, train_freq=256, gradient_steps=128,
                exploration_fraction=min(1.0, 0.16 * 50_000 / max_frames), exploration_final_eps=0.04,
                policy_kwargs={"net_arch": [256, 256]})

    def snapshot():
        return (lambda obs: int(model.predict(obs, deterministic=True)[0])), {"updates": int(model._n_updates)}

    class Evaluate(BaseCallback):
        def _on_training_start(self) -> None:
            ev.ready()

        def _on_step(self) -> bool:
            return not ev.maybe_eval(self.num_timesteps, snapshot)

    model.learn(total_timesteps=max_frames, callback=Evaluate())
    return {**ev.result(), "total_frames": int(model.num_timesteps), "total_updates": int(model._n_updates)}


# ------------------------------------------------------------------ RLlib

def _rllib(seed: int, max_frames: int, cores: int, threshold: float) -> dict:
    K.protect_ray()
    import ray
    import torch
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    K.pin_torch_threads(1)
    ev = K.PeriodicEval(seed, threshold=threshold)
    # RLlib's own Ray, as its examples start it, pinned to --cores (distrl's contenders start theirs through
    # distrl.runtime.ray.run; all of them with distrl's token, K.protect_ray)
    ray.init(num_cpus=cores, include_dashboard=False, logging_level="ERROR")
    config = (
        DQNConfig()
        .environment(ENV_ID)
        .env_runners(num_env_runners=0)
        .learners(num_learners=0)
        .training(
            lr=5e-4, train_batch_size_per_learner=32,
            replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50_000,
                                  "alpha": 0.6, "beta": 0.4},
            n_step=(2, 5), double_q=True, dueling=True, epsilon=[(0, 1.0), (25_000, 0.02)])
        .rl_module(model_config=DefaultModelConfig(
            fcnet_hiddens=[256], fcnet_activation="tanh", fcnet_bias_initializer="zeros_",
            head_fcnet_hiddens=[256], head_fcnet_bias_initializer="zeros_"))
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    ev.ready()
    frames = updates = 0
    try:
        while frames < max_frames:
            result = algo.train()
            frames = int(result["num_env_steps_sampled_lifetime"])
            trained = result.get("learners", {}).get("__all_modules__", {}).get("num_env_steps_trained_lifetime", 0)
            updates = int(trained) // 32

            def snapshot(updates=updates):  # bound now: called within this iteration
                module = algo.get_module()

                def act(obs):
                    with torch.no_grad():
                        return int(module.forward_inference({Columns.OBS: torch.as_tensor(obs)[None]})[Columns.ACTIONS][0])
                return act, {"updates": updates}

            if ev.maybe_eval(frames, snapshot):
                break
    finally:
        algo.stop()
        ray.shutdown()
    return {**ev.result(), "total_frames": frames, "total_updates": updates}


# ------------------------------------------------------------------ parent

def child(args: argparse.Namespace) -> None:
    K.limit_cores(args.cores)
    name, seed, cap, th = args.child, args.seed, args.max_frames, args.solved_mean
    run = {"distrl-apex": lambda: _distrl("apex", seed, cap, th),
           "distrl-apex-inline": lambda: _distrl("apex", seed, cap, th, runtime="inline"),
           "distrl-gorila": lambda: _distrl("gorila", seed, cap, th),
           "sb3-dqn": lambda: _sb3(seed, cap, th), "rllib-dqn": lambda: _rllib(seed, cap, args.cores, th)}[name]
    K.guarded(run)


def _median_censored(values: list[float | None]) -> float | None:
    """Median with unsolved runs as +inf (they took longer than the cap); None if that median is unsolved."""
    if not values:
        return None
    m = statistics.median([math.inf if v is None else v for v in values])
    return None if math.isinf(m) else m


def summarize(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for name in dict.fromkeys(r["contender"] for r in rows):
        mine = [r for r in rows if r["contender"] == name]
        ok = [r for r in mine if r["status"] == "ok"]
        out[name] = {"runs": len(mine), "failed": [r["status"] for r in mine if r["status"] != "ok"],
                     "solved": sum(bool(r.get("solved")) for r in ok),
                     "median_wall_s": _median_censored([r.get("wall_s_to_solve") for r in ok]) if ok else None,
                     "median_frames": _median_censored([r.get("frames_to_solve") for r in ok]) if ok else None}
    return out


def print_table(rows: list[dict]) -> None:
    print(f"\n{'contender':<15} {'seed':>4} {'solved':>6} {'frames':>9} {'wall s':>8} {'updates':>8}"
          f"  {'last eval: frames, wall s, mean':>32}  status")
    for r in rows:
        s = r.get("solved")
        last = (r.get("evaluations") or [{}])[-1]
        print(f"{r['contender']:<15} {r['seed']:>4} {('yes' if s else 'no') if r['status'] == 'ok' else '-':>6} "
              f"{K.fmt(r.get('frames_to_solve')):>9} {K.fmt(r.get('wall_s_to_solve'), 1):>8} "
              f"{K.fmt((r.get('solved_at') or {}).get('updates')):>8}  "
              f"{K.fmt(last.get('frames')):>12}, {K.fmt(last.get('wall_s'), 1):>7}, {K.fmt(last.get('mean'), 1):>7}"
              f"  {r['status']}")
    summary = summarize(rows)
    print("(wall s includes start-up: the library built and its processes started; see startup_s in the results)")
    print(f"\n{'contender':<15} {'solved':>7} {'median frames':>14} {'median wall s':>14}")
    for name, s in summary.items():
        print(f"{name:<15} {s['solved']:>3}/{s['runs']:<3} {K.fmt(s['median_frames']):>14} "
              f"{K.fmt(s['median_wall_s'], 1):>14}")
    print("\nratios distrl / peer of median wall time to solve (target <= 0.5):")
    for mine in DISTRL:
        for peer in ("sb3-dqn", "rllib-dqn"):
            if mine in summary and peer in summary:
                a, b = summary[mine]["median_wall_s"], summary[peer]["median_wall_s"]
                ratio = f"{a / b:.2f}" if a and b else "n/a (a median run did not solve)"
                print(f"  {mine} / {peer}: {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    ap.add_argument("--max-frames", type=int, default=200_000, help="frame cap per run (unsolved past it)")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="CPUs every contender is pinned to")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per run before it counts as failed")
    ap.add_argument("--smoke", action="store_true", help="plumbing check: seed 1, 5,000 frames (one evaluation)")
    ap.add_argument("--no-write", action="store_true", help="print only; append nothing to results/")
    ap.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    ap.add_argument("--solved-mean", type=float, default=K.SOLVED_MEAN,
                    help="evaluation mean that counts as solved (475; lower only to check the stop path)")
    ap.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if args.smoke:
        args.seeds, args.max_frames, args.timeout = args.seeds[:1], 5_000, 600.0

    rows = []
    for seed in args.seeds:
        for name in args.contenders:
            t = time.perf_counter()
            print(f"{name} seed {seed} ...", end=" ", flush=True)
            log = K.child_log("cartpole", f"{name}-seed{seed}")
            argv = ["--child", name, "--seed", str(seed), "--max-frames", str(args.max_frames), "--cores", str(args.cores),
                    "--solved-mean", str(args.solved_mean)]
            out = K.run_child("bench.peers.cartpole_solve", argv, args.timeout, log)
            out = {"contender": name, "seed": seed, **out, "hyperparameters": HYPERPARAMS[name],
                   "process_s": round(time.perf_counter() - t, 1)}
            out["solved_at"] = next((e for e in out.get("evaluations", []) if e.get("frames") == out.get("frames_to_solve")
                                     and out.get("solved")), None)
            rows.append(out)
            print(out["status"] if out["status"] != "ok" else
                  f"{'solved' if out.get('solved') else 'not solved'} "
                  f"(frames {K.fmt(out.get('frames_to_solve'))}, wall {K.fmt(out.get('wall_s_to_solve'), 1)} s; "
                  f"last eval mean {K.fmt((out.get('evaluations') or [{}])[-1].get('mean'), 1)}; "
                  f"process {out['process_s']} s)")
    print_table(rows)
    settings = {"env": ENV_ID, "seeds": args.seeds, "max_frames": args.max_frames, "cores": args.cores,
                "smoke": args.smoke, "protocol": f"{K.EVAL_EPISODES} greedy episodes every {K.EVAL_EVERY_FRAMES} "
                f"frames on CartPole-v1 reset with seed+{K.EVAL_SEED_OFFSET}; solved at mean >= {args.solved_mean}"}
    K.finish("cartpole", rows, settings, not args.no_write, summarize(rows), speed=not args.no_speed_index)


if __name__ == "__main__":
    main()
