"""The DQN learner's step in float32 and with the CPU levers of issues 34 and 59: DQNLearner.step (double Q,
Adam, the dueling network) on Pong's 4x84x84 stacks at DQN's batch 32, the 2-core plan's 64 and the paper's 512,
on 4x42x42 and 4x64x64 stacks at 64 (`screen_size`; at 42x42 also universe-starter-agent's torso, `pong42u-b64`),
and on MinAtar Breakout's 4x10x10 frames at apex-minatar's 128; one thread, random batches (an update's cost does
not depend on what it learns). The levers, alone and together:
- `bf16`: `learner.bf16`, bfloat16 autocast. Fast only on a CPU with bf16 units (AVX512-BF16 or AMX);
  elsewhere it can be slower than float32.
- `channels-last`: `learner.channels_last`, both networks' weights in torch.channels_last, so oneDNN's
  convolutions take NHWC.
- `compile`: both networks through torch.compile (inductor; it needs a C compiler, and compiles for a while
  on the first steps, which the warm-up takes).
- `fused-adam`: `learner.fused_adam`, torch's fused Adam kernel (one pass over all parameters) for the
  per-tensor loop it runs on a CPU by default (the 2-core Pong run's learner spent 16% of its time in Adam).
- `staged`: every field of the batch and the weights already tensors on the learner's device. Without it
  each case gets what a run's learner gets: on a GPU the frames on the device (components/staging.py stages
  them), reward, discount, action and weights as arrays, which the step copies from pageable memory, each
  copy synchronous; the H200 Pong profile (issue 59) had 19% of the update in that conversion. `--device
  cuda` times the step on a GPU (a lease's check).
- `single-q`: `learner.double_q=false`, the target network alone picks and values the next action, which drops
  the online network's forward pass on the next frames (one of the step's three).

    .venv/bin/python -m bench.dqn_learner_step                  # every shape, float32 and bf16, 3 rounds
    .venv/bin/python -m bench.dqn_learner_step --shapes pong-b64 \
        --variants float32,bf16,channels-last,channels-last+bf16,compile,compile+bf16 --out bench/results/F.jsonl

Each round times every case for about `--seconds` (as many updates as a warm batch of 3 showed fit), alternating
the cases so that a noisy neighbour hits them alike.
Prints updates/s (median of the rounds) and each variant's ratio to float32 at the same shape; with `--out`, also
a sitting of bench/results/ (bench/results.py) with a row per shape and variant. Asserts nothing."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from bench import results
from bench.machine import versions
from bench.runs import command_line
from bench.small_frame_net import universe_q
from bench.timing import alternating_rates
from distrl.components.learner import DQNLearner
from distrl.components.staging import DeviceStager
from distrl.config.sections import LearnerConfig
from distrl.nets import make_q_network

SHAPES = {  # name: (obs shape, actions, batch)
    "pong-b32": ((4, 84, 84), 6, 32),  # DQN's batch: the 2-core plan's batch lever (issue 59)
    "pong-b64": ((4, 84, 84), 6, 64),
    "pong42-b64": ((4, 42, 42), 6, 64),  # screen_size=42 (universe-starter-agent's frames): the frame lever (issue 59)
    "pong42u-b64": ((4, 42, 42), 6, 64),  # the same frames, universe-starter-agent's torso (bench/small_frame_net.py)
    "pong64-b64": ((4, 64, 64), 6, 64),  # screen_size=64 (DreamerV3's frames): Nature CNN keeps 4x4 positions
    "pong-b512": ((4, 84, 84), 6, 512),
    "minatar-b128": ((4, 10, 10), 3, 128),
}


NETWORKS = {"pong42u-b64": universe_q}  # a shape's network where it is not distrl's own (make_q_network)

LEVERS = ("bf16", "channels-last", "compile", "fused-adam", "staged", "single-q")


def case(shape: str, variant: str, device: str = "cpu"):
    obs_shape, actions, b = SHAPES[shape]
    levers = set(variant.split("+")) - {"float32"}
    if levers - set(LEVERS):
        raise SystemExit(f"unknown lever(s) in {variant!r}: choose float32 or a '+' of {', '.join(LEVERS)}")
    torch.manual_seed(0)
    network = NETWORKS.get(shape, make_q_network)(obs_shape, actions)
    learner = DQNLearner(network, LearnerConfig(batch_size=b, optimizer="adam", fused_adam="fused-adam" in levers,
                                                double_q="single-q" not in levers),
                         device=device, bf16="bf16" in levers, channels_last="channels-last" in levers)
    if "compile" in levers:  # the optimizer keeps the same parameters: a compiled module wraps, it does not copy
        learner.online, learner.target = torch.compile(learner.online), torch.compile(learner.target)
    rng = np.random.default_rng(0)
    high = 2 if obs_shape[1:] == (10, 10) else 256  # MinAtar's frames are 0/1
    batches = [{"obs": rng.integers(0, high, (b, *obs_shape), dtype=np.uint8),
                "next_obs": rng.integers(0, high, (b, *obs_shape), dtype=np.uint8),
                "action": rng.integers(0, actions, b), "reward": rng.normal(size=b).astype(np.float32),
                "discount": np.full(b, 0.97, np.float32)} for _ in range(2)]
    weights = np.ones(b, np.float32)
    on_device = set(batches[0]) if "staged" in levers else set(DeviceStager(learner.device, ("obs", "next_obs")).fields)
    batches = [{k: torch.as_tensor(v, device=learner.device) if k in on_device else v for k, v in batch.items()}
               for batch in batches]
    if "staged" in levers:
        weights = torch.as_tensor(weights, device=learner.device)

    def run(n: int) -> None:
        for i in range(n):
            learner.step(batches[i % 2], weights)
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated, from: " + ", ".join(SHAPES))
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--variants", default="float32,bf16", help="comma-separated: float32, or levers joined by '+' "
                   f"from {', '.join(LEVERS)}; float32 always runs, the ratios' base")
    p.add_argument("--warmup", type=int, default=3, help="steps before timing (torch.compile compiles in them)")
    p.add_argument("--device", default="cpu", help="the learner's device (cuda: a GPU lease's check)")
    p.add_argument("--out", type=Path, help="append a sitting (with the speed index) to this result file")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    # each compiled network instance is a recompile of the same forward; past dynamo's limit (8) it runs eagerly
    torch._dynamo.config.recompile_limit = 64
    shapes = args.shapes.split(",")
    variants = list(dict.fromkeys(["float32", *args.variants.split(",")]))
    gpu = {"gpu": torch.cuda.get_device_name(args.device)} if args.device.startswith("cuda") else {}
    head = results.header(command_line("bench.dqn_learner_step"), threads=args.threads, device=args.device, **gpu) \
        if args.out else None
    cases = {(s, v): case(s, v, args.device) for s in shapes for v in variants}
    rates = alternating_rates(cases, args.rounds, warmup=args.warmup, seconds=args.seconds)
    print(f"{versions()}; {args.device}, {args.threads} thread(s), about {args.seconds:g} s x {args.rounds} rounds")
    print("| shape | variant | updates/s | / float32 |")
    print("|---|---|---|---|")
    rows = []
    for s in shapes:
        for v in variants:
            rows.append({"contender": v, "shape": s, "updates_per_s": round(rates[s, v], 2),
                         "ratio_to_float32": round(rates[s, v] / rates[s, "float32"], 3)})
            print(f"| {s} | {v} | {rates[s, v]:.1f} | {rates[s, v] / rates[s, 'float32']:.2f}x |")
    if args.out:
        with open(args.out, "a") as f:
            results.write_sitting(f, head, rows)


if __name__ == "__main__":
    main()
