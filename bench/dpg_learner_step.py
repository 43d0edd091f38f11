"""Where the DPG learner's time goes (issue 33): distrl's DPGLearner.step against SB3's TD3.train, one
thread, the same process, the same shapes (HalfCheetah: 17 observations, 6 actions), batches drawn from
random data (the rate of an update does not depend on what it learns).

    bench/peers/.venv/bin/python -m bench.dpg_learner_step             # every case, 2 rounds
    bench/peers/.venv/bin/python -m bench.dpg_learner_step --updates 50 --rounds 1   # smoke

Each case runs `--updates` updates per round; rounds alternate the cases so that a noisy neighbour hits
them alike. Prints updates/s and samples/s per case (median of the rounds) and each case's ratio to SB3's
TD3 at the same batch. Asserts nothing."""

from __future__ import annotations

import argparse

import numpy as np
import torch

from bench.machine import versions
from bench.timing import alternating_rates
from distrl.components.dpg_learner import DPGLearner
from distrl.nets.dpg import DPGActor, DPGCritic

OBS, ACT = 17, 6


def distrl_case(batch: int, hidden: tuple[int, int], activation: str, twin: bool, delay: int, tau: float,
                fused: bool = False, smoothing: bool | None = None, bf16: bool = False):
    torch.manual_seed(0)
    low, high = [-1.0] * ACT, [1.0] * ACT
    actor = DPGActor(OBS, ACT, low, high, hidden=hidden, activation=activation)

    def critic():
        return DPGCritic(OBS, ACT, hidden=hidden, activation=activation, action_layer=0)
    smoothing = twin if smoothing is None else smoothing
    learner = DPGLearner(actor, critic(), lr=1e-3, critic2=critic() if twin else None, tau=tau,
                         target_noise=0.2 if smoothing else 0.0, policy_delay=delay, low=low, high=high,
                         actor_grad_clip=0.0 if twin else 1.0, fused=fused, bf16=bf16)
    rng = np.random.default_rng(0)
    batches = [{"obs": rng.standard_normal((batch, OBS), dtype=np.float32),
                "next_obs": rng.standard_normal((batch, OBS), dtype=np.float32),
                "action": rng.uniform(-1, 1, (batch, ACT)).astype(np.float32),
                "reward": rng.standard_normal(batch, dtype=np.float32),
                "discount": np.full(batch, 0.99, np.float32)} for _ in range(8)]
    weights = np.ones(batch, np.float32)

    def run(n: int) -> None:
        for i in range(n):
            learner.step(batches[i % 8], weights)
    return run


def sb3_case(batch: int):
    import gymnasium as gym
    from stable_baselines3 import TD3
    env = gym.make("HalfCheetah-v5")
    model = TD3("MlpPolicy", env, learning_rate=1e-3, batch_size=batch, buffer_size=20_000, seed=0, device="cpu")
    rng = np.random.default_rng(0)
    for _ in range(10_000):  # random data in SB3's own buffer, so train() samples as it does in a run
        model.replay_buffer.add(rng.standard_normal((1, OBS)), rng.standard_normal((1, OBS)),
                                rng.uniform(-1, 1, (1, ACT)), rng.standard_normal(1), np.zeros(1), [{}])
    model._logger = __import__("stable_baselines3.common.logger", fromlist=["x"]).configure(None, [""])

    def run(n: int) -> None:
        model.train(gradient_steps=n, batch_size=batch)
    return run


CASES = {
    # name: (batch, factory)
    "sb3-td3-256": (256, lambda: sb3_case(256)),
    "distrl-td3-256": (256, lambda: distrl_case(256, (400, 300), "relu", True, 2, 0.005)),
    "distrl-td3-256-fused": (256, lambda: distrl_case(256, (400, 300), "relu", True, 2, 0.005, fused=True)),
    "distrl-td3-256-256x256-fused": (256, lambda: distrl_case(256, (256, 256), "relu", True, 2, 0.005, fused=True)),
    "distrl-paper-tanh-512": (512, lambda: distrl_case(512, (400, 300), "tanh", False, 1, 0.0)),
    "distrl-relu-256": (256, lambda: distrl_case(256, (400, 300), "relu", False, 1, 0.0)),
    "distrl-relu-128": (128, lambda: distrl_case(128, (400, 300), "relu", False, 1, 0.0)),
    "distrl-relu-256-256x256": (256, lambda: distrl_case(256, (256, 256), "relu", False, 1, 0.0)),
    # apex-dpg-twin-critics' learner (twin critics, no smoothing, no delay, Polyak), float32 and learner.bf16
    "distrl-twin-critics": (256, lambda: distrl_case(256, (256, 256), "relu", True, 1, 0.005, True, False)),
    "distrl-twin-critics-bf16": (256, lambda: distrl_case(256, (256, 256), "relu", True, 1, 0.005, True, False,
                                                          bf16=True)),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--updates", type=int, default=400)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    names = args.cases.split(",")
    rates = alternating_rates({n: CASES[n][1]() for n in names}, args.rounds, warmup=20, n=args.updates)
    print(f"{versions()}; {args.threads} thread(s), {args.updates} updates x {args.rounds} rounds")
    sb3 = {CASES[n][0]: rates[n] for n in names if n.startswith("sb3")}
    print("| case | updates/s | samples/s | vs SB3 TD3, same batch |")
    print("|---|---|---|---|")
    for n in names:
        u, b = rates[n], CASES[n][0]
        ratio = f"{u / sb3[b]:.2f}x" if b in sb3 else "-"
        print(f"| {n} | {u:.1f} | {u * b:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
