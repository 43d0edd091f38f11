"""The MinAtar comparison's two peer contenders, one per run: Stable-Baselines3's DQN (`sb3-dqn`) and a
re-implementation of the MinAtar paper's DQN (Young & Tian 2019) (`paper-dqn`), both with the paper's
network and DQN values. bench/minatar.py runs distrl's contenders and this script once per peer, each in
its own process.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.minatar_peers
     --contender {sb3-dqn,paper-dqn} --game Breakout --seed 1 --budget-s 900 --log-every-s 30
     --eval-every-frames 50000 --eval-episodes 10 --out PATH.jsonl [--cores N]

Env: distrl.envs.make_env("MinAtar/<game>-v1", "train", seed=seed), exactly what distrl's contenders train
on: channel-first uint8 0/1 frames (C, 10, 10), MinAtar's sticky actions (0.1), info["episode"]["r"] at each
episode end. One env step is one frame.

Clock: starts before the env and the model are built (after imports) and leaves evaluations out: both
contenders are synchronous, so training is paused while the greedy policy is evaluated (in SB3's case
inside its step callback), and wall_s is training time only. Training stops once wall_s reaches --budget-s.

Evaluation: the first time frames reach each multiple of --eval-every-frames, distrl.envs.evaluate(env_id,
greedy act, --eval-episodes, epsilon=0.001, seed=seed + 1000): the protocol distrl's own evaluator uses.

Output: appended to --out, one JSON line every --log-every-s seconds of training time (contender, game, seed,
wall_s, frames, updates, return_mean_100 = mean of the last 100 finished training episodes or null,
episodes, eval_mean / eval_returns / eval_frames of the latest evaluation finished since the previous line
or null, evals = all of them), and a last line at the budget with "final": true, the machine, the command,
every evaluation and the contender's hyperparameters with their source. That last line is also printed as
the child's result line (common.emit); a failure prints {"status": "failed: ..."} there and exits 1.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import importlib.metadata as md
import json
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.peers import common as K

CONTENDERS = ("sb3-dqn", "paper-dqn")
PAPER_SOURCE = ("Young & Tian 2019, 'MinAtar: An Atari-Inspired Testbed for Thorough and Reproducible "
                "Reinforcement Learning Experiments' (arXiv:1903.03176), its DQN hyperparameter table and "
                "reference code kenjyoung/MinAtar examples/dqn.py (the RMSprop arguments it passes to torch)")

# The paper's DQN values, shared by both peers.
BATCH = 32
BUFFER = 100_000
LEARNING_STARTS = 5_000      # frames of uniform random play before the first update
TARGET_EVERY = 1_000         # updates between target-network copies
GAMMA = 0.99
EPS_START, EPS_END, EPS_FRAMES = 1.0, 0.1, 100_000
RMSPROP = {"lr": 2.5e-4, "alpha": 0.95, "eps": 0.01, "centered": True, "momentum": 0.95}
SB3_TOTAL_TIMESTEPS = 20_000_000  # never reached: the wall budget stops SB3 from its callback

COMMON_HP = {
    "source": PAPER_SOURCE,
    "network": "Conv2d(C, 16, 3, stride 1), ReLU, flatten 16*8*8, Linear(1024, 128), ReLU, Linear(128, actions); "
               "torch default init; 0/1 frames cast to float, not divided by 255",
    "batch_size": BATCH, "buffer_size": BUFFER, "learning_starts": LEARNING_STARTS, "updates_per_frame": 1,
    "target_update": f"copy every {TARGET_EVERY} updates", "gamma": GAMMA, "loss": "Huber (smooth L1, delta 1)",
    "optimizer": "torch.optim.RMSprop(lr=2.5e-4, alpha=0.95, eps=0.01, centered=True, momentum=0.95)",
    "gradient_clipping": None, "n_step": 1, "double_q": False, "dueling": False, "replay": "uniform, 1-step",
    "torch_threads": 1, "n_envs": 1,
}
HYPERPARAMS = {
    "sb3-dqn": {
        **COMMON_HP,
        "label": "Stable-Baselines3 DQN with the MinAtar network and the MinAtar paper's DQN values",
        "sb3": {"policy": "CnnPolicy", "features_extractor_class": "MinAtarExtractor (the torso above)",
                "net_arch": [], "normalize_images": False, "train_freq": 1, "gradient_steps": 1,
                "target_update_interval": TARGET_EVERY, "max_grad_norm": 1e10, "optimize_memory_usage": False,
                "total_timesteps": SB3_TOTAL_TIMESTEPS,
                "exploration_fraction": EPS_FRAMES / SB3_TOTAL_TIMESTEPS,
                "exploration_initial_eps": EPS_START, "exploration_final_eps": EPS_END},
        "exploration": "uniform random for the first 5,000 frames (learning_starts); epsilon 1.0 -> 0.1 linearly "
                       "over frames 0-100,000 (SB3's schedule runs from frame 0, the paper's from frame 5,000)",
        "notes": "target_update_interval counts env steps in SB3; with train_freq 1 and gradient_steps 1 that is "
                 "one copy per 1,000 updates once learning has started. max_grad_norm 1e10: no clipping, as the "
                 "paper (SB3's default is 10)",
    },
    "paper-dqn": {
        **COMMON_HP,
        "label": "a re-implementation of the MinAtar paper's DQN (Young & Tian 2019)",
        "exploration": "uniform random for the first 5,000 frames, then epsilon 1.0 -> 0.1 linearly over the "
                       "next 100,000 frames, 0.1 after",
        "replay": "uniform numpy ring of 100,000 transitions (uint8 frames), sampled with replacement",
        "notes": "written from the paper's description for this benchmark (not the GPL reference code); one "
                 "process, one update per frame from frame 5,001",
    },
}


def torso(channels: int):
    """The MinAtar network up to its 128 ReLU units (the paper's: a quarter of Nature DQN's widths)."""
    from torch import nn
    return nn.Sequential(nn.Conv2d(channels, 16, 3, stride=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(16 * 8 * 8, 128), nn.ReLU())


# ------------------------------------------------------------------ clock, rows, evaluations

class Recorder:
    """One clock, one row format and one evaluation protocol for both contenders, so they are measured alike.
    tick() is called once per frame from the training loop: it evaluates when due (off the clock), writes a row
    when a log interval has passed, and says when the budget is spent."""

    def __init__(self, args: argparse.Namespace, env_id: str):
        self.args, self.env_id = args, env_id
        self.t0 = time.perf_counter()
        self.eval_s = 0.0
        self.next_log, self.next_eval = args.log_every_s, args.eval_every_frames
        self.returns: deque[float] = deque(maxlen=100)
        self.episodes = 0
        self.pending: list[dict] = []   # evaluations finished since the last row
        self.evaluations: list[dict] = []
        self.frames = self.updates = 0

    def wall_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def episode(self, ret: float) -> None:
        self.returns.append(float(ret))
        self.episodes += 1

    def tick(self, frames: int, updates: int, greedy: Callable[[np.ndarray], np.ndarray]) -> bool:
        """True once the budget is spent (the caller stops training)."""
        self.frames, self.updates = int(frames), int(updates)
        if frames >= self.next_eval:
            self._evaluate(greedy)
        wall = self.wall_s()
        if wall >= self.args.budget_s:
            return True
        if wall >= self.next_log:
            self._write(self.row(wall))
            while self.next_log <= wall:
                self.next_log += self.args.log_every_s
        return False

    def _evaluate(self, greedy: Callable[[np.ndarray], np.ndarray]) -> None:
        from distrl.envs import evaluate
        wall, t = self.wall_s(), time.perf_counter()
        try:
            returns = evaluate(self.env_id, greedy, self.args.eval_episodes, epsilon=0.001,
                               seed=self.args.seed + K.EVAL_SEED_OFFSET)
        finally:
            self.eval_s += time.perf_counter() - t
        ev = {"frames": self.frames, "updates": self.updates, "wall_s": round(wall, 3),
              "mean": float(np.mean(returns)), "returns": returns}
        self.pending.append(ev)
        self.evaluations.append(ev)
        while self.next_eval <= self.frames:
            self.next_eval += self.args.eval_every_frames

    def row(self, wall: float) -> dict:
        last = self.pending[-1] if self.pending else None
        row = {"contender": self.args.contender, "game": self.args.game, "seed": self.args.seed,
               "wall_s": round(wall, 3), "frames": self.frames, "updates": self.updates,
               "return_mean_100": float(np.mean(self.returns)) if self.returns else None,
               "episodes": self.episodes,
               "eval_mean": last["mean"] if last else None, "eval_returns": last["returns"] if last else None,
               "eval_frames": last["frames"] if last else None, "evals": self.pending}
        self.pending = []
        return row

    def _write(self, row: dict) -> None:
        with open(self.args.out, "a") as f:  # opened per row: a crash keeps every row written so far
            f.write(json.dumps(row, default=str) + "\n")
        print(f"{row['contender']} {row['wall_s']:7.1f}s frames {row['frames']:>9,} updates {row['updates']:>9,} "
              f"return100 {K.fmt(row['return_mean_100'], 2)} eval {K.fmt(row['eval_mean'], 2)}", flush=True)

    def final(self, extra: dict) -> dict:
        """The last row, at the budget: the usual fields plus what a reader needs to trust the run."""
        wall = self.wall_s()
        machine = K.machine_info()
        machine["versions"]["minatar"] = md.version("minatar")
        row = {**self.row(wall), "final": True, "env_id": self.env_id, "budget_s": self.args.budget_s,
               "fps": round(self.frames / wall, 1) if wall > 0 else None,
               "eval_s_excluded": round(self.eval_s, 3), "evaluations": self.evaluations,
               "eval_protocol": {"every_frames": self.args.eval_every_frames, "episodes": self.args.eval_episodes,
                                 "epsilon": 0.001, "seed": self.args.seed + K.EVAL_SEED_OFFSET,
                                 "function": "distrl.envs.evaluate"},
               "hyperparameters": HYPERPARAMS[self.args.contender], **extra,
               "command": K.command_line(),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": machine}
        self._write(row)
        return row


# ------------------------------------------------------------------ stable-baselines3

def sb3_dqn(args: argparse.Namespace, rec: Recorder) -> dict:
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.preprocessing import is_image_space
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    from distrl.envs import make_env

    class MinAtarExtractor(BaseFeaturesExtractor):
        """The paper's torso as SB3's features extractor; SB3's Q head on top is one Linear(128, actions)."""

        def __init__(self, observation_space, features_dim: int = 128):
            super().__init__(observation_space, features_dim)
            self.net = torso(observation_space.shape[0])

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.net(obs)

    env = make_env(rec.env_id, "train", seed=args.seed)
    model = DQN("CnnPolicy", env, seed=args.seed, device="cpu", verbose=0,
                learning_rate=RMSPROP["lr"], buffer_size=BUFFER, learning_starts=LEARNING_STARTS,
                batch_size=BATCH, gamma=GAMMA, train_freq=1, gradient_steps=1,
                target_update_interval=TARGET_EVERY, exploration_fraction=EPS_FRAMES / SB3_TOTAL_TIMESTEPS,
                exploration_initial_eps=EPS_START, exploration_final_eps=EPS_END, max_grad_norm=1e10,
                policy_kwargs={"features_extractor_class": MinAtarExtractor, "net_arch": [],
                               "normalize_images": False, "optimizer_class": torch.optim.RMSprop,
                               "optimizer_kwargs": {k: v for k, v in RMSPROP.items() if k != "lr"}})

    # What the Q-network actually receives: recorded from its first call (0/1 floats, not 1/255).
    seen: dict = {}

    def first_input(module, inputs):
        x = inputs[0]
        seen.update(dtype=str(x.dtype), max=float(x.max()), min=float(x.min()))
        handle.remove()

    handle = model.policy.q_net.features_extractor.register_forward_pre_hook(first_input)

    def greedy(batch: np.ndarray) -> np.ndarray:
        return model.predict(batch, deterministic=True)[0]

    class Log(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    rec.episode(info["episode"]["r"])
            return not rec.tick(self.num_timesteps, self.model._n_updates, greedy)

    model.learn(total_timesteps=SB3_TOTAL_TIMESTEPS, callback=Log())
    return {"sb3_is_image_space": bool(is_image_space(model.observation_space)),
            "sb3_normalize_images": bool(model.policy.normalize_images), "q_net_first_input": seen,
            "q_net": str(model.policy.q_net).replace("\n", " ")}


# ------------------------------------------------------------------ the paper's DQN, re-implemented

class Replay:
    """The last `capacity` transitions in preallocated numpy rings (frames as uint8), sampled uniformly."""

    def __init__(self, capacity: int, shape: tuple[int, ...]):
        self.obs = np.zeros((capacity, *shape), np.uint8)
        self.next_obs = np.zeros((capacity, *shape), np.uint8)
        self.action = np.zeros(capacity, np.int64)
        self.reward = np.zeros(capacity, np.float32)
        self.terminal = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.pos = capacity, 0, 0

    def add(self, obs, action: int, reward: float, next_obs, terminal: bool) -> None:
        i = self.pos
        self.obs[i], self.action[i], self.reward[i], self.next_obs[i], self.terminal[i] = (
            obs, action, reward, next_obs, terminal)
        self.pos = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        idx = rng.integers(self.size, size=n)
        return self.obs[idx], self.action[idx], self.reward[idx], self.next_obs[idx], self.terminal[idx]


def epsilon(frame: int) -> float:
    """1 (uniform random) before learning starts, then linear from 1.0 to 0.1 over the next 100,000 frames."""
    if frame < LEARNING_STARTS:
        return 1.0
    return max(EPS_END, EPS_START - (EPS_START - EPS_END) * (frame - LEARNING_STARTS) / EPS_FRAMES)


def paper_dqn(args: argparse.Namespace, rec: Recorder) -> dict:
    import torch
    import torch.nn.functional as F
    from torch import nn

    from distrl.envs import make_env

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    env = make_env(rec.env_id, "train", seed=args.seed)
    shape, n_actions = env.observation_space.shape, int(env.action_space.n)
    q = nn.Sequential(torso(shape[0]), nn.Linear(128, n_actions))
    target = copy.deepcopy(q).requires_grad_(False)
    opt = torch.optim.RMSprop(q.parameters(), **RMSPROP)
    replay = Replay(BUFFER, shape)

    def greedy(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return q(torch.as_tensor(batch).float()).argmax(1).numpy()

    obs, _ = env.reset()
    frames = updates = 0
    while not rec.tick(frames, updates, greedy):
        action = int(rng.integers(n_actions)) if rng.random() < epsilon(frames) else int(greedy(obs[None])[0])
        next_obs, reward, terminated, truncated, info = env.step(action)
        replay.add(obs, action, reward, next_obs, terminated)  # a truncation (none in MinAtar) would bootstrap
        frames += 1
        if terminated or truncated:
            rec.episode(info["episode"]["r"])
            next_obs, _ = env.reset()
        obs = next_obs
        if frames <= LEARNING_STARTS:
            continue
        s, a, r, s2, done = (torch.from_numpy(x) for x in replay.sample(BATCH, rng))
        q_sa = q(s.float()).gather(1, a[:, None]).squeeze(1)
        with torch.no_grad():
            y = r + GAMMA * (1.0 - done) * target(s2.float()).max(1).values
        loss = F.smooth_l1_loss(q_sa, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        updates += 1
        if updates % TARGET_EVERY == 0:
            target.load_state_dict(q.state_dict())
    return {"q_net": str(q).replace("\n", " ")}


# ------------------------------------------------------------------ entry

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contender", choices=CONTENDERS, required=True)
    ap.add_argument("--game", default="Breakout", help="MinAtar game: Asterix, Breakout, Freeway, Seaquest, SpaceInvaders")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-s", type=float, default=900.0, help="seconds of training (evaluations left out)")
    ap.add_argument("--log-every-s", type=float, default=30.0, help="seconds of training between rows")
    ap.add_argument("--eval-every-frames", type=int, default=50_000)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--out", type=Path, required=True, help="JSON lines appended here")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="CPUs this run is pinned to")
    args = ap.parse_args()

    cpus = K.limit_cores(args.cores)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        K.pin_torch_threads(1)
        import distrl.envs  # noqa: F401 - imports (torch, distrl, SB3) come before the clock starts
        if args.contender == "sb3-dqn":
            import stable_baselines3  # noqa: F401
        run = {"sb3-dqn": sb3_dqn, "paper-dqn": paper_dqn}[args.contender]
        rec = Recorder(args, f"MinAtar/{args.game}-v1")  # the clock starts here
        extra = run(args, rec)
        result = rec.final({**extra, "cpus": cpus})
    except Exception as exc:  # noqa: BLE001 - reported on the result line, and by the exit status
        traceback.print_exc()
        K.emit({"contender": args.contender, "status": f"failed: {K.reason(exc)}"})
        sys.exit(1)
    K.emit({**result, "status": "ok"})


if __name__ == "__main__":
    main()
