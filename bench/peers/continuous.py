"""Continuous-control race: distrl's Ape-X DPG against Stable-Baselines3's TD3 and SAC on one MuJoCo task,
each for the same wall-clock budget on this machine, one after another (issue 22).

    bash bench/peers/setup.sh                                  # one venv for every contender
    bench/peers/.venv/bin/python -m bench.peers.continuous --env HalfCheetah-v5 --seed 1   # 3 x 20 min
    bench/peers/.venv/bin/python -m bench.peers.continuous --contenders sb3-td3 --budget-s 300
    bench/peers/.venv/bin/python -m bench.peers.continuous --collect   # rebuild results + figure only

(from the repository root, as every bench: bench/README.md)

A call that runs some contenders keeps the others' rows from the results file it rewrites.

Contenders:
- distrl-apex-dpg: `distrl train apex-dpg --env ENV --runtime ray --actors 2 --seed S --preset apex-dpg-small`
  (the default below 32 actors until 2026-11-27) and nothing else set; its greedy evaluations are its own (noiseless
  policy, every 2,500 learner updates, 5 episodes, in an evaluator process beside the actors and the
  learner, so they share the cores and count on its clock).
- distrl-apex-dpg-td3-learner: the same with `--preset apex-dpg-td3-learner` (TD3's learner inside Ape-X).
- distrl-apex-dpg-one-critic: the same with `--preset apex-dpg-one-critic` (that learner with one critic; the
  default below 32 actors for a day, 2026-11-27).
- distrl-apex-dpg-twin-critics: the same with `--preset apex-dpg-twin-critics` (one-critic's learner with TD3's
  twin critics back; the default below 32 actors on the evening of 2026-11-27).
- distrl-apex-dpg-twin-critics-bf16: the same with `--preset apex-dpg-twin-critics-bf16` (those values with the
  hidden layers in bfloat16 where the CPU has the units; the default below 32 actors since the night of 2026-11-27).
- sb3-td3, sb3-sac: rl-baselines3-zoo's MuJoCo values for the task (HYPERPARAMS below, with the commit they
  are read from), one process each. Their clock leaves their evaluations out: SB3 trains synchronously,
  so training pauses while the deterministic policy plays.

Every contender reports the mean return of its last 10 training episodes (SB3's own window; MuJoCo
episodes are 1,000 steps) and of its latest greedy evaluation (distrl.envs.evaluate, 5 episodes, seed
S + 1000 for the peers), against wall time and frames (one frame per env step).

Writes bench/results/continuous-<env>-seed<S>.jsonl in bench/results.py's schema: the sittings the file
held, each with the rows of the contenders not run this time (their summaries measured again against this
call's better peer), then this call's sitting (its header: the command, the machine, the speed index
measured first; `--no-speed-index` skips it for trial runs) with one row per contender per log interval,
then one summary row per contender; and bench/figures/continuous-<env>-seed<S>.png (greedy return against
wall time and frames, drawn with distrl.plotting). Prints figures; asserts nothing about them."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np

from bench import results
from bench.peers import common as K
from bench.runs import RACE_FRAMES, RESULTS, ROOT, command_line, distrl_rows, earlier_results, run_for

# distrl's contenders: Ape-X DPG with the preset each names
DISTRL = {"distrl-apex-dpg": "apex-dpg-small", "distrl-apex-dpg-td3-learner": "apex-dpg-td3-learner",
          "distrl-apex-dpg-one-critic": "apex-dpg-one-critic", "distrl-apex-dpg-twin-critics": "apex-dpg-twin-critics",
          "distrl-apex-dpg-twin-critics-bf16": "apex-dpg-twin-critics-bf16"}
PEERS = ("sb3-td3", "sb3-sac")
CONTENDERS = (*DISTRL, *PEERS)
EVAL_EPISODES = 5
ZOO = "DLR-RM/rl-baselines3-zoo, hyperparams/{algo}.yml at commit d29756c (the MuJoCo section, '&mujoco-defaults')"
HYPERPARAMS = {
    "sb3-td3": {"source": ZOO.format(algo="td3"),
                "kwargs": {"learning_rate": 1e-3, "buffer_size": 1_000_000, "learning_starts": 10_000,
                           "batch_size": 256, "train_freq": 1, "gradient_steps": 1, "gamma": 0.99, "tau": 0.005,
                           "policy_kwargs": {"net_arch": [400, 300]}},
                "action_noise": "NormalActionNoise(0, 0.1) per action dimension (noise_type normal, noise_std 0.1)",
                "notes": "the rest SB3's TD3 defaults: policy_delay 2, target_policy_noise 0.2, clip 0.5"},
    "sb3-sac": {"source": ZOO.format(algo="sac"),
                "kwargs": {"learning_starts": 10_000},
                "notes": "the rest SB3's SAC defaults: lr 3e-4, buffer 1M, batch 256, tau 0.005, gamma 0.99, "
                         "train_freq 1, gradient_steps 1, ent_coef 'auto', net_arch [256, 256]"},
}


# ------------------------------------------------------------------ one SB3 contender (a child process)

class Clock:
    """Training time only (evaluations are left out), rows every log interval, evaluations every N frames."""

    def __init__(self, args: argparse.Namespace):
        self.args, self.t0, self.eval_s = args, time.perf_counter(), 0.0
        self.next_log, self.next_eval = args.log_every_s, args.eval_every_frames
        self.returns: deque[float] = deque(maxlen=10)
        self.episodes, self.latest_eval, self.evaluations = 0, None, []

    def wall_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def tick(self, frames: int, updates: int, act) -> bool:
        """Evaluate when due, write a row when due (and after each evaluation, so the row has its
        frames); True once the budget (seconds, or frames with --max-frames) is spent."""
        evaluated = frames >= self.next_eval
        if evaluated:
            from distrl.envs import evaluate
            wall, t = self.wall_s(), time.perf_counter()
            returns = evaluate(self.args.env, act, EVAL_EPISODES, seed=self.args.seed + K.EVAL_SEED_OFFSET)
            self.eval_s += time.perf_counter() - t
            self.latest_eval = float(np.mean(returns))
            self.evaluations.append({"frames": frames, "wall_s": round(wall, 3), "mean": self.latest_eval})
            while self.next_eval <= frames:
                self.next_eval += self.args.eval_every_frames
        wall = self.wall_s()
        done = wall >= self.args.budget_s or (self.args.max_frames and frames >= self.args.max_frames)
        if wall >= self.next_log or evaluated or done:
            row = {"wall_s": round(wall, 3), "frames": int(frames), "updates": int(updates),
                   "return_mean_10": float(np.mean(self.returns)) if self.returns else None,
                   "episodes": self.episodes, "eval_mean": self.latest_eval}
            self.latest_eval = None
            with open(self.args.out, "a") as f:  # opened per row: a crash keeps every row written so far
                f.write(json.dumps(row) + "\n")
            while self.next_log <= wall:
                self.next_log += self.args.log_every_s
        return bool(done)


def sb3_child(args: argparse.Namespace) -> None:
    import torch
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.noise import NormalActionNoise

    from distrl.envs import make_env

    torch.set_num_threads(1)
    env = make_env(args.env, "train", seed=args.seed)
    hp = HYPERPARAMS[args.child]
    clock = Clock(args)  # the clock starts once imports are done
    if args.child == "sb3-td3":
        n = env.action_space.shape[0]
        model = TD3("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0,
                    action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)), **hp["kwargs"])
    else:
        model = SAC("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0, **hp["kwargs"])

    def act(batch: np.ndarray) -> np.ndarray:
        return model.predict(batch, deterministic=True)[0]

    class Log(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    clock.returns.append(float(info["episode"]["r"]))
                    clock.episodes += 1
            return not clock.tick(self.num_timesteps, self.model._n_updates, act)

    model.learn(total_timesteps=10**9, callback=Log())


# ------------------------------------------------------------------ the race

def run_distrl(name: str, env: str, seed: int, budget_s: float, log_every_s: float, run_dir: Path,
               log: Path) -> list[dict]:
    preset = DISTRL[name]
    cmd = [sys.executable, "-m", "distrl.cli", "train", "apex-dpg", "--env", env, "--runtime", "ray",
           "--actors", "2", "--seed", str(seed), "--run-dir", str(run_dir), "--overwrite", "--quiet",
           "--preset", preset, "--set", f"log_every_s={log_every_s}",
           "--max-frames", str(RACE_FRAMES)]  # the clock ends the race, not the preset's 1M frames
    run_for(cmd, budget_s, log)
    return rows_of_distrl(run_dir)


def rows_of_distrl(run_dir: Path) -> list[dict]:
    return [{k: r[k] for k in ("wall_s", "frames", "updates", "return_mean_10", "episodes", "eval_mean")}
            for r in distrl_rows(run_dir)]


def run_peer(name: str, args: argparse.Namespace, out: Path, log: Path) -> list[dict]:
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "bench.peers.continuous", "--child", name, "--env", args.env, "--seed", str(args.seed),
           "--budget-s", str(args.budget_s), "--log-every-s", str(args.log_every_s),
           "--eval-every-frames", str(args.eval_every_frames), "--out", str(out)]
    run_for(cmd, args.budget_s + 900, log, stop_ray=False)  # it stops itself; evaluations are off its clock
    return peer_rows(out)


def peer_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def time_to(rows: list[dict], target: float) -> dict | None:
    """The first row whose greedy evaluation reaches `target`."""
    for r in rows:
        if r["eval_mean"] is not None and r["eval_mean"] >= target:
            return {"wall_s": r["wall_s"], "frames": r["frames"]}
    return None


def late_mean(rows: list[dict], since_s: float) -> float | None:
    """The mean of the evaluations the rows from `since_s` on show, each once (a row repeats the latest
    evaluation until the next): for tasks whose evaluations swing, beside the final one."""
    shown: list[float] = []
    for r in rows:
        if r["wall_s"] >= since_s and r["eval_mean"] is not None and (not shown or r["eval_mean"] != shown[-1]):
            shown.append(r["eval_mean"])
    return sum(shown) / len(shown) if shown else None


def summarize(results: dict[str, list[dict]], budget_s: float) -> dict[str, dict]:
    """Per contender: figures at the budget, and the time to the better peer's final evaluation. The
    rows are those within the budget: the final and the best evaluation come from the same ones, so
    the best is never below the final. `eval_last_tenth` is the mean of the evaluations of the budget's
    last tenth."""
    evals = {n: [r["eval_mean"] for r in rows if r["eval_mean"] is not None] for n, rows in results.items()}
    final_eval = {n: e[-1] if e else None for n, e in evals.items()}
    peers = [final_eval[p] for p in PEERS if final_eval.get(p) is not None]
    target = max(peers) if peers else None
    out = {}
    for name, rows in results.items():
        last = rows[-1] if rows else {}
        reach = time_to(rows, target) if target is not None else None
        out[name] = {"contender": name, "summary": True, "frames_at_budget": last.get("frames"),
                     "wall_s": last.get("wall_s"), "return_mean_10_at_budget": last.get("return_mean_10"),
                     "final_eval": final_eval[name], "best_eval": max(evals[name], default=None),
                     "eval_last_tenth": late_mean(rows, 0.9 * budget_s),
                     "frames_per_s": round(last["frames"] / last["wall_s"], 1) if last.get("wall_s") else None,
                     "better_peer_final_eval": target, "time_to_better_peer": reach,
                     "ratio_to_budget": round(reach["wall_s"] / budget_s, 3) if reach else None}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="HalfCheetah-v5", help="MuJoCo task: HalfCheetah-v5, Hopper-v5, Walker2d-v5, Ant-v5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=1200.0, help="wall-clock seconds per contender (20 min)")
    p.add_argument("--log-every-s", type=float, default=15.0)
    p.add_argument("--eval-every-frames", type=int, default=10_000, help="the peers' greedy evaluations")
    p.add_argument("--contenders", default=",".join(CONTENDERS), help=f"comma-separated subset of {CONTENDERS}")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-continuous")
    p.add_argument("--collect", action="store_true",
                   help="run nothing: rebuild the results file and the figure from what --run-root holds")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    p.add_argument("--child", choices=PEERS, help=argparse.SUPPRESS)
    p.add_argument("--max-frames", type=int, default=0, help=argparse.SUPPRESS)  # a child's frame budget (0: none)
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return sb3_child(args)
    names = [n for n in args.contenders.split(",") if n]
    unknown = [n for n in names if n not in CONTENDERS]
    if unknown:
        p.error(f"unknown contender(s) {', '.join(unknown)}: choose from {', '.join(CONTENDERS)}")

    tag = f"continuous-{args.env.replace('/', '-')}-seed{args.seed}"
    head = results.header(command_line("bench.peers.continuous"), seed=args.seed,
                          speed=not (args.no_speed_index or args.collect))
    if args.collect:
        head["speed_index_note"] = "not measured: --collect rebuilds the rows of runs made before"
    ran: dict[str, list[dict]] = {}
    for name in names:
        run_dir, log = args.run_root / f"{tag}-{name}", args.run_root / f"{tag}-{name}.log"
        peer_out = args.run_root / f"{tag}-{name}.jsonl"
        if args.collect:
            rows = rows_of_distrl(run_dir) if name in DISTRL else peer_rows(peer_out)
        else:
            print(f"=== {name}: {args.env}, seed {args.seed}, {args.budget_s:.0f} s", flush=True)
            rows = run_distrl(name, args.env, args.seed, args.budget_s, args.log_every_s, run_dir, log) \
                if name in DISTRL else run_peer(name, args, peer_out, log)
        ran[name] = [r for r in rows if r["wall_s"] <= args.budget_s + 1]  # a slow stop does not count

    out = RESULTS / f"{tag}.jsonl"
    kept = earlier_results(out, args.budget_s, rerun=ran)  # contenders not run this time keep their sittings
    curves = {name: [r for r in sitting.of(name) if not r.get("summary")] for sitting in kept
              for name in sitting.contenders()}
    curves.update(ran)
    out.parent.mkdir(parents=True, exist_ok=True)
    common = {"env": args.env, "budget_s": args.budget_s,
              "hyperparameters": {**HYPERPARAMS, **{n: f"the preset {p} (distrl presets)" for n, p in DISTRL.items()}}}
    summaries = summarize(curves, args.budget_s)  # every contender's, against the better peer's final of them all
    with open(out, "w") as f:
        for sitting in kept:
            results.write_sitting(f, sitting.header, [{**r, **summaries[r["contender"]]} if r.get("summary") else r
                                                      for r in sitting.rows])
        results.write_sitting(f, head)
        for name, rows in ran.items():
            for row in rows:
                results.write_row(f, {"contender": name, **row})
            results.write_row(f, {**common, **summaries[name]})
            print(json.dumps(summaries[name]), flush=True)

    from distrl.plotting import plot_comparison
    curves = {name: [{"wall_s": np.array([r["wall_s"] for r in rows if r["eval_mean"] is not None], dtype=float),
                      "frames": np.array([r["frames"] for r in rows if r["eval_mean"] is not None], dtype=float),
                      "eval_mean": np.array([r["eval_mean"] for r in rows if r["eval_mean"] is not None], dtype=float)}]
              for name, rows in curves.items() if any(r["eval_mean"] is not None for r in rows)}
    figure = plot_comparison(curves, ROOT / "bench" / "figures" / f"{tag}.png", y="eval_mean",
                             ylabel=f"greedy return ({EVAL_EPISODES} episodes)",
                             title=f"{args.env}, seed {args.seed}, one contender at a time on {os.cpu_count()} cores")
    print(f"wrote {out} and {figure}")


if __name__ == "__main__":
    main()
