"""Issue 59's peer contender: the strongest run a user could make here on CPUs, Stable-Baselines3's PPO with
rl-baselines3-zoo's Atari values, trained on distrl's Pong env for a wall-clock budget (90 minutes by
default). This is the row distrl's time on Pong is compared with.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.ppo_pong --seed 1 --budget-s 5400
     --log-every-s 60 --eval-every-frames 250000 --out PATH.jsonl [--eval-episodes N] [--n-envs 8]
     [--schedule-frames 10000000] [--env ALE/Pong-v5] [--cores N]

Env: --n-envs copies of distrl.envs.make_env(env, "train", seed=seed + i, max_episode_frames=50,000) in SB3's
DummyVecEnv (one process: on 2 cores subprocesses would only add copies), what distrl's Pong actors step: ALE
v5 with frameskip 1 and no sticky actions, up to 30 no-op starts, action repeat 4 with a max over the last two
frames, 84x84 grey, 4 stacked frames as channel-first uint8 (4, 84, 84), rewards clipped to [-1, 1], whole
games (a life loss is only flagged), at most 50,000 emulator frames a training episode (distrl's Pong run's
max_episode_frames), info["episode"]["r"] the raw score. SB3 takes the stack as an image (uint8, [0, 255],
channels first: no VecTransposeImage) and divides it by 255. The seeds are SB3's too: a model seeded with s
seeds env i's first reset with s + i. Frames are emulator frames, 4 per agent step, as distrl counts them;
steps are agent steps summed over the envs; updates are optimizer steps (minibatches).

Clock: starts before the envs and the model are built (after imports) and leaves evaluations out: SB3's PPO is
synchronous, so training is paused while the greedy policy is evaluated inside its step callback, and wall_s
is training time only. Training stops at the first env step after wall_s reaches --budget-s (an update phase
in progress finishes first), or when the schedules end (below), whichever comes first.

Schedules: the zoo's lin_2.5e-4 and lin_0.1 fall linearly to 0 over its n_timesteps, 1e7 agent steps (40M
frames). The budget is wall-clock, so here they fall to 0 over --schedule-frames (default 10M frames, 2.5M
agent steps, rounded up to whole rollouts), about what 90 minutes of 2 cores can reach; if that comes first,
training ends there (both at 0) and the final line says "stopped": "schedule".

Evaluation: the first time frames reach each multiple of --eval-every-frames, distrl.envs.evaluate(env, the
policy's argmax action (model.predict(obs, deterministic=True)), --eval-episodes, epsilon, seed=seed + 1000,
max_episode_frames), with the episodes, epsilon and episode cap of distrl's own Pong run, read from its config
(bench/pong.py's preset and SAME_EVALUATION, the Ape-X protocol it gives every system): 8 episodes, epsilon
0.001, 108,000 frames, 30 no-op starts, unclipped scores.

Output: appended to --out, one JSON line every --log-every-s seconds of training time (contender, env_id,
seed, wall_s, frames, steps, updates, return_mean_100 = mean of the last 100 finished training episodes or
null, episodes, eval_mean / eval_returns / eval_frames of the latest evaluation finished since the previous
line or null, evals = all of them), and a last line with "final": true, why it stopped, the machine, the
command, every evaluation, the env and evaluation protocols and the hyperparameters with their sources. That
last line is also printed as the result line (common.emit); a failure prints {"status": "failed: ..."} there
and exits 1. The machine's speed index (bench/speed.py, about 20 s) is measured before the clock starts and kept
in that last line.

Collect: `python -m bench.peers.ppo_pong --collect RAW.jsonl [--speed-index FILE.json]` (the project's own .venv
will do: SB3 is not imported) turns a finished run's lines into a result in bench/results.py's schema, beside
bench.pong's: bench/results/atari-<game>-ppo-cpu<N>-seed<S>.jsonl (a header, rows of "kind" curve and eval, one
summary, with bench.pong's keys, so that bench.report reads every Atari run alike) and its figure in
bench/figures/. --speed-index gives the index for a run whose last line lacks it (measured beside it by hand).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.peers import common as K
from bench.runs import ROOT

CONTENDER = "sb3-ppo"
ZOO = "rl-baselines3-zoo hyperparams/ppo.yml, atari (DLR-RM/rl-baselines3-zoo)"
PPO_PAPER = ("Schulman et al. 2017, 'Proximal Policy Optimization Algorithms' (arXiv:1707.06347), the clipped "
             "objective and its Atari values (table 5), which the zoo's follow")
SB3_DEFAULT = "Stable-Baselines3 PPO's default (not set by the zoo)"

# The zoo's atari entry.
N_STEPS, N_EPOCHS, BATCH = 128, 4, 256
LR, CLIP = 2.5e-4, 0.1                # lin_2.5e-4, lin_0.1: initial values, falling linearly to 0
VF_COEF, ENT_COEF = 0.5, 0.01
ZOO_TIMESTEPS = 10_000_000            # n_timesteps: agent steps of its AtariWrapper env (4 frames each)

HYPERPARAMS = {
    "label": "Stable-Baselines3 PPO with rl-baselines3-zoo's Atari values, on distrl's Pong env",
    "source": f"{ZOO}; algorithm: {PPO_PAPER}",
    "policy": "CnnPolicy (zoo): SB3's NatureCNN (Conv 32 8x8/4, 64 4x4/2, 64 3x3/1, Linear 512, ReLU) shared by "
              "a linear policy head and a linear value head, orthogonal init, observations divided by 255",
    "n_envs": "8 (zoo; --n-envs)", "n_steps": N_STEPS, "n_epochs": N_EPOCHS, "batch_size": BATCH,
    "learning_rate": f"lin_{LR:g} (zoo): {LR:g} x the fraction of the schedule left",
    "clip_range": f"lin_{CLIP:g} (zoo): {CLIP:g} x the fraction of the schedule left",
    "vf_coef": VF_COEF, "ent_coef": ENT_COEF,
    "schedule": f"the zoo's schedules run over its n_timesteps, {ZOO_TIMESTEPS:.0e} agent steps (40M frames); "
                "here over --schedule-frames (recorded as schedule_frames / schedule_steps), because the budget "
                "is wall-clock",
    "frame_stack": "4 (zoo: VecFrameStack over SB3's AtariWrapper); here distrl's env stacks 4 frames itself "
                   "(gymnasium FrameStackObservation, channel-first), so SB3 gets no VecFrameStack",
    "sb3_defaults": {"source": SB3_DEFAULT, "gamma": 0.99, "gae_lambda": 0.95, "max_grad_norm": 0.5,
                     "normalize_advantage": True, "clip_range_vf": None, "target_kl": None,
                     "optimizer": "Adam (eps 1e-5)"},
    "env_differences_from_zoo": "the zoo wraps NoFrameskip Atari in SB3's AtariWrapper (30 no-ops, repeat 4 with "
                                "max-pool, 84x84 grey, sign-clipped rewards, FIRE on reset, a life loss ends the "
                                "episode); distrl's env has the same preprocessing but no FIRE on reset and whole "
                                "games (Pong has no lives, and serves without FIRE), and caps training episodes "
                                "at 50,000 frames",
    "vec_env": "DummyVecEnv, one process", "device": "cpu",
}


def distrl_pong(env_id: str) -> Any:
    """The config of distrl's own Pong run (bench/pong.py: its Ape-X preset with the evaluation it gives every
    system), from which the training episode cap and the evaluation protocol are read."""
    import distrl  # noqa: F401 - fills the registry build_config reads
    from bench.pong import PRESETS, SAME_EVALUATION
    from distrl.config import build_config
    return build_config("apex", env_id, PRESETS["apex"], dict(SAME_EVALUATION))


# ------------------------------------------------------------------ clock, rows, evaluations

class Recorder:
    """The clock, the rows and the evaluations. tick() is called once per vector step from SB3's callback: it
    evaluates when due (off the clock), writes a row when a log interval has passed, and says when the budget is
    spent."""

    def __init__(self, args: argparse.Namespace, cfg: Any, frame_skip: int):
        self.args, self.cfg, self.frame_skip = args, cfg, frame_skip
        self.t0 = time.perf_counter()
        self.eval_s = 0.0
        self.next_log, self.next_eval = args.log_every_s, args.eval_every_frames
        self.returns: deque[float] = deque(maxlen=100)
        self.episodes = 0
        self.pending: list[dict] = []   # evaluations finished since the last row
        self.evaluations: list[dict] = []
        self.steps = self.frames = self.updates = 0

    def wall_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def episode(self, ret: float) -> None:
        self.returns.append(float(ret))
        self.episodes += 1

    def tick(self, steps: int, updates: int, greedy: Callable[[np.ndarray], np.ndarray]) -> bool:
        """True once the budget is spent (the caller stops training)."""
        self.steps, self.frames, self.updates = int(steps), int(steps) * self.frame_skip, int(updates)
        if self.frames >= self.next_eval:
            self._evaluate(greedy)
        wall = self.wall_s()
        if wall >= self.args.budget_s:
            return True
        if wall >= self.next_log:
            self._write(self.row(wall))
            while self.next_log <= wall:
                self.next_log += self.args.log_every_s
        return False

    def eval_protocol(self) -> dict:
        return {"every_frames": self.args.eval_every_frames, "episodes": self.args.eval_episodes,
                "epsilon": self.cfg.eval_epsilon, "max_episode_frames": self.cfg.eval_max_frames, "noop_max": 30,
                "seed": self.args.seed + K.EVAL_SEED_OFFSET, "action": "argmax (model.predict deterministic=True)",
                "function": "distrl.envs.evaluate",
                "source": f"distrl's Pong run: bench/pong.py, preset {self.cfg.preset}, eval_protocol "
                          f"{self.cfg.eval_protocol} (distrl.config.presets.EVAL_PROTOCOLS)"}

    def _evaluate(self, greedy: Callable[[np.ndarray], np.ndarray]) -> None:
        from distrl.envs import evaluate
        wall, t = self.wall_s(), time.perf_counter()
        try:
            returns = evaluate(self.args.env, greedy, self.args.eval_episodes, epsilon=self.cfg.eval_epsilon,
                               seed=self.args.seed + K.EVAL_SEED_OFFSET, max_episode_frames=self.cfg.eval_max_frames)
        finally:
            self.eval_s += time.perf_counter() - t
        ev = {"frames": self.frames, "steps": self.steps, "updates": self.updates, "wall_s": round(wall, 3),
              "mean": float(np.mean(returns)), "returns": returns}
        self.pending.append(ev)
        self.evaluations.append(ev)
        while self.next_eval <= self.frames:
            self.next_eval += self.args.eval_every_frames

    def row(self, wall: float) -> dict:
        last = self.pending[-1] if self.pending else None
        row = {"contender": CONTENDER, "env_id": self.args.env, "seed": self.args.seed,
               "wall_s": round(wall, 3), "frames": self.frames, "steps": self.steps, "updates": self.updates,
               "return_mean_100": float(np.mean(self.returns)) if self.returns else None,
               "episodes": self.episodes,
               "eval_mean": last["mean"] if last else None, "eval_returns": last["returns"] if last else None,
               "eval_frames": last["frames"] if last else None, "evals": self.pending}
        self.pending = []
        return row

    def _write(self, row: dict) -> None:
        with open(self.args.out, "a") as f:  # opened per row: a crash keeps every row written so far
            f.write(json.dumps(row, default=str) + "\n")
        print(f"{row['contender']} {row['wall_s']:7.1f}s frames {row['frames']:>11,} updates {row['updates']:>8,} "
              f"return100 {K.fmt(row['return_mean_100'], 2)} eval {K.fmt(row['eval_mean'], 2)}", flush=True)

    def final(self, extra: dict) -> dict:
        """The last row: the usual fields plus what a reader needs to trust the run."""
        wall = self.wall_s()
        row = {**self.row(wall), "final": True, "budget_s": self.args.budget_s,
               "fps": round(self.frames / wall, 1) if wall > 0 else None,
               "steps_per_s": round(self.steps / wall, 1) if wall > 0 else None,
               "eval_s_excluded": round(self.eval_s, 3), "evaluations": self.evaluations,
               "eval_protocol": self.eval_protocol(),
               "env_protocol": {"make_env": f"distrl.envs.make_env({self.args.env!r}, 'train', seed=seed + i, "
                                            f"max_episode_frames={self.cfg.max_episode_frames})",
                                "n_envs": self.args.n_envs, "frame_skip": self.frame_skip,
                                "source": f"distrl's Pong run's config (preset {self.cfg.preset}): "
                                          "max_episode_frames; the rest is make_env's Atari protocol"},
               "hyperparameters": HYPERPARAMS, **extra,
               "command": K.command_line(),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": K.machine_info()}
        self._write(row)
        return row


# ------------------------------------------------------------------ stable-baselines3

def sb3_ppo(args: argparse.Namespace, rec: Recorder) -> dict:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.preprocessing import is_image_space
    from stable_baselines3.common.utils import LinearSchedule
    from stable_baselines3.common.vec_env import DummyVecEnv

    from distrl.envs import make_env

    venv = DummyVecEnv([functools.partial(make_env, args.env, "train", seed=args.seed + i,
                                          max_episode_frames=rec.cfg.max_episode_frames)
                        for i in range(args.n_envs)])
    rollout = args.n_envs * N_STEPS
    schedule_steps = -(-args.schedule_frames // (rec.frame_skip * rollout)) * rollout  # whole rollouts
    minibatches = -(-rollout // BATCH)  # per epoch; no target_kl, so every epoch takes them all
    # LinearSchedule(start, 0, 1.0) is the zoo's lin_<start>: start x progress_remaining.
    model = PPO("CnnPolicy", venv, n_steps=N_STEPS, n_epochs=N_EPOCHS, batch_size=BATCH,
                learning_rate=LinearSchedule(LR, 0.0, 1.0), clip_range=LinearSchedule(CLIP, 0.0, 1.0),
                vf_coef=VF_COEF, ent_coef=ENT_COEF, seed=args.seed, device="cpu", verbose=0)

    def greedy(batch: np.ndarray) -> np.ndarray:
        return model.predict(batch, deterministic=True)[0]

    class Log(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    rec.episode(info["episode"]["r"])
            return not rec.tick(self.num_timesteps, self.model._n_updates * minibatches, greedy)

    model.learn(total_timesteps=schedule_steps, callback=Log())
    progress = float(model._current_progress_remaining)
    return {"stopped": "schedule" if model.num_timesteps >= schedule_steps else "budget",
            "schedule_frames": schedule_steps * rec.frame_skip, "schedule_steps": schedule_steps,
            "progress_remaining": round(progress, 4), "learning_rate_end": model.lr_schedule(progress),
            "clip_range_end": model.clip_range(progress), "epochs": model._n_updates,
            "sb3_env": type(model.env).__name__, "observation_space": str(model.observation_space),
            "sb3_is_image_space": bool(is_image_space(model.observation_space)),
            "sb3_normalize_images": bool(model.policy.normalize_images), "torch_threads": torch.get_num_threads(),
            "policy_net": str(model.policy).replace("\n", " ")}


# ------------------------------------------------------------------ the result file

def collect(raw: Path, speed_index: dict | None = None, out_root: Path = ROOT / "bench") -> Path:
    """A finished run's lines as a bench.pong-shaped result: curve rows with their interval rates, the
    evaluations (at the training time they began: training waits for them), bench.pong's summary."""
    from bench import pong
    from bench import results as R

    lines = [json.loads(x) for x in raw.read_text().splitlines() if x.strip()]
    final = next((x for x in reversed(lines) if x.get("final")), None)
    if final is None:
        raise SystemExit(f"{raw}: no final line: the run has not finished (or was killed); collect a finished run")
    rows = [x for x in lines if x.get("contender") == CONTENDER and x["seed"] == final["seed"]]
    curve, before = [], {"wall_s": 0.0, "frames": 0, "updates": 0}
    for x in rows:
        dt = x["wall_s"] - before["wall_s"]
        curve.append({"wall_s": round(x["wall_s"], 1), "frames": x["frames"], "updates": x["updates"],
                      "train_return": x["return_mean_100"], "eval_return": x["eval_mean"],
                      "env_frames_per_s": round((x["frames"] - before["frames"]) / dt, 1) if dt > 0 else None,
                      "learner_updates_per_s": round((x["updates"] - before["updates"]) / dt, 1) if dt > 0 else None,
                      "replay_inserts_per_s": None, "replay_samples_per_s": None})
        before = x
    evals = [{"wall_s": round(e["wall_s"], 1), "frames": e["frames"], "updates": e["updates"],
              "eval_return": e["mean"]} for e in final["evaluations"]]
    machine = final["machine"]
    cores = len(final["cpus"])
    label = f"cpu{cores}"
    plan = {"n_envs": final["env_protocol"]["n_envs"], "torch_threads": final["torch_threads"],
            "schedule_frames": final["schedule_frames"]}
    meta = {"game": final["env_id"], "arch": "ppo", "seed": final["seed"], "machine": label, "cores": cores,
            "plan": plan}
    summary = {**pong.summarise(curve, evals, meta, [], 19.0), "stopped": final["stopped"],
               "eval_s_excluded": final["eval_s_excluded"]}
    started = datetime.datetime.fromisoformat(final["date"]) - datetime.timedelta(
        seconds=final["wall_s"] + final["eval_s_excluded"])
    head = {"schema": R.SCHEMA, "date": started.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": machine.get("commit"), "command": final["command"],
            "preset": "rl-baselines3-zoo atari (PPO)", "seed": final["seed"],
            "machine": {**{k: v for k, v in machine.items() if k != "commit"}, "label": label},
            "speed_index": final.get("speed_index") or speed_index,
            "game": final["env_id"], "arch": "ppo", "cores": cores, "plan": plan, "contender": CONTENDER,
            "clock": "training time: SB3's PPO pauses for each evaluation, and wall_s leaves those pauses out",
            "hyperparameters": final["hyperparameters"], "eval_protocol": final["eval_protocol"],
            "env_protocol": final["env_protocol"], "raw": str(raw)}
    if head["speed_index"] is None:
        head["speed_index_note"] = "not measured: the run's last line holds none and --speed-index gave none"
    game = final["env_id"].split("/")[-1].removesuffix("-v5").lower()
    tag = f"atari-{game}-ppo-{label}-seed{final['seed']}"
    out = out_root / "results" / f"{tag}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        R.write_sitting(f, head, [{"kind": "curve", **r} for r in curve] + [{"kind": "eval", **e} for e in evals]
                        + [{"kind": "summary", **pong.figures(summary)}])
    pong.draw(curve, evals, out_root / "figures" / f"{tag}.png",
              f"SB3 PPO (zoo values) on {final['env_id']}, seed {final['seed']}, {label} ({cores} cores)")
    return out


# ------------------------------------------------------------------ entry

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="ALE/Pong-v5")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-s", type=float, default=5400.0, help="seconds of training (evaluations left out)")
    ap.add_argument("--log-every-s", type=float, default=60.0, help="seconds of training between rows")
    ap.add_argument("--eval-every-frames", type=int, default=250_000, help="emulator frames between evaluations")
    ap.add_argument("--eval-episodes", type=int, help="default: distrl's Pong run's (bench/pong.py: 8)")
    ap.add_argument("--n-envs", type=int, default=8)
    ap.add_argument("--schedule-frames", type=int, default=10_000_000,
                    help="emulator frames over which the learning rate and clip range fall to 0")
    ap.add_argument("--out", type=Path, help="JSON lines appended here (needed to train)")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="CPUs this run is pinned to")
    ap.add_argument("--collect", type=Path, metavar="RAW", help="train nothing: write RAW's finished run as a result")
    ap.add_argument("--speed-index", type=Path, help="with --collect: bench.speed's JSON, for a run that lacks it")
    args = ap.parse_args()
    if args.collect:
        speed = json.loads(args.speed_index.read_text()) if args.speed_index else None
        print(f"wrote {collect(args.collect, speed)}")
        return
    if args.out is None:
        ap.error("--out is needed to train (or --collect RAW to write a finished run's result)")

    cpus = K.limit_cores(args.cores)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        K.pin_torch_threads(len(cpus))  # the Atari CNN: one thread per core, as common.py says
        import stable_baselines3  # noqa: F401 - imports (torch, distrl, SB3) come before the clock starts

        from bench.speed import measure
        from distrl.architectures.common import frame_skip
        speed_index = measure()  # before the clock, as bench.pong's
        cfg = distrl_pong(args.env)
        if args.eval_episodes is None:
            args.eval_episodes = cfg.eval_episodes
        rec = Recorder(args, cfg, frame_skip(args.env))  # the clock starts here
        extra = sb3_ppo(args, rec)
        result = rec.final({**extra, "cpus": cpus, "speed_index": speed_index})
    except Exception as exc:  # noqa: BLE001 - reported on the result line, and by the exit status
        traceback.print_exc()
        K.emit({"contender": CONTENDER, "status": f"failed: {K.reason(exc)}"})
        sys.exit(1)
    K.emit({**result, "status": "ok"})


if __name__ == "__main__":
    main()
