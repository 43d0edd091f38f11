"""The machine's speed index: a fixed, short workload run on one thread at the start of a bench, so that a
reader can tell whether two result rows came from comparable machines (the same CPU name here differs up
to 2x from one session to the next).

Three parts, each timed as the median of 5 alternating rounds (bench/timing.py):
- `learner_step`: a fixed conv net's forward, backward and Adam step on a fixed batch, plain torch (not
  distrl's code, so the index moves with the machine and not with the commit): a DQN learner's update on
  MinAtar-shaped input;
- `mlp_step_bf16`: a 256-256 MLP critic's step on a batch of 256 in bfloat16 autocast, as `learner.bf16`
  runs Ape-X DPG's: CPUs of one name differ most here (that learner's bf16 step ran 1.9x its float32
  step on 2026-11-27, 1.3x on 2026-11-28);
- `env_step`: Gymnasium CartPole-v1 steps with random actions, the Python and numpy side of acting.

The index is the geometric mean of the three rates over REFERENCE's: 1.00 is the 2-core AMD EPYC machine of
2026-11-28 evening; 0.5 is a machine half as fast.

    python -m bench.speed            # prints the index and both rates, about 10 s
"""

from __future__ import annotations

import json
import math
import sys

from bench.timing import alternating_rates

REFERENCE = {"learner_step_per_s": 670.0, "mlp_step_bf16_per_s": 630.0, "env_step_per_s": 126000.0}
REFERENCE_MACHINE = "2-core AMD EPYC (avx512_bf16), 2026-11-28 19:50 UTC"
SCHEME = "speed-index/1"  # a changed workload gets a new name: indices of two schemes are not comparable


def _learner_case(bf16: bool = False):
    import contextlib

    import torch
    from torch import nn

    torch.manual_seed(0)
    if bf16:  # HalfCheetah's 17 observations and 6 actions into a critic
        net, batch, inputs, outputs = (nn.Sequential(nn.Linear(23, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                                     nn.Linear(256, 1)), 256, (23,), 1)
    else:
        net, batch, inputs, outputs = (nn.Sequential(nn.Conv2d(4, 16, 3), nn.ReLU(), nn.Flatten(),
                                                     nn.Linear(16 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 6)),
                                       32, (4, 10, 10), 6)
    target = [p.detach().clone() for p in net.parameters()]
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    obs = torch.rand(batch, *inputs, generator=torch.Generator().manual_seed(1))
    actions = torch.randint(0, outputs, (batch, 1), generator=torch.Generator().manual_seed(2))
    returns = torch.rand(batch, generator=torch.Generator().manual_seed(3))

    def run(k: int) -> None:
        for _ in range(k):
            with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
                q = net(obs).gather(1, actions).squeeze(1).float()
            loss = nn.functional.smooth_l1_loss(q, returns)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        with torch.no_grad():  # back to the same weights: every call does the same arithmetic
            for p, t in zip(net.parameters(), target):
                p.copy_(t)

    return run


def _env_case():
    import gymnasium as gym
    import numpy as np

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(k: int) -> None:
        for _ in range(k):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(2)))
            if terminated or truncated:
                env.reset()

    return run


def measure(seconds: float = 1.0, rounds: int = 5) -> dict:
    """The index and its three rates, on one torch thread (restored after)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rates = alternating_rates({"learner_step_per_s": _learner_case(),
                                   "mlp_step_bf16_per_s": _learner_case(bf16=True), "env_step_per_s": _env_case()},
                                  rounds=rounds, warmup=20, seconds=seconds)
    finally:
        torch.set_num_threads(threads)
    index = math.prod(rates[k] / REFERENCE[k] for k in REFERENCE) ** (1 / len(REFERENCE))
    return {"scheme": SCHEME, "index": round(index, 2), **{k: round(v, 1) for k, v in rates.items()},
            "reference": REFERENCE_MACHINE}


def main() -> int:
    print(json.dumps(measure(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
