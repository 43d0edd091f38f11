"""Which of a run's ReLU units still fire: for each ReLU layer of the latest checkpoint's network, the share
of its units above 0 on at least one of N states of random play, how far the policy's outputs spread
over those states, and a softmax policy's entropy there. A layer at 0 is dead for good (no gradient passes
a ReLU at 0), and the network then gives one output everywhere: BA3C's MinAtar Freeway seed 3 (issue 58)
ended so, its policy uniform. A live network whose policy stays at the uniform's entropy has learned no
preference: A3C's 2-core Pong run (issue 59).

    .venv/bin/python -m bench.dead_units RUN_DIR [--states 500] [--seed 0] [--init SEED] [--out bench/results/F.jsonl]

`--init SEED` measures a fresh draw of the run's network instead (torch's default initialization, which every
distrl network uses), the baseline a trained network's shares are read against.

Prints a line a layer; with `--out`, also appends a sitting of bench/results/ (bench/results.py, no speed
index: nothing here is timed) with a row a layer and a row of the outputs. Asserts nothing."""

from __future__ import annotations

import argparse
import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import nn

from distrl.components.policy import Policy

UNITS = (nn.ReLU, nn.ELU)  # an ELU below 0 keeps a gradient, so its firing share shows a drift, not death


@contextmanager
def unit_inputs(net: nn.Module) -> Iterator[dict[str, torch.Tensor]]:
    """Each nn.ReLU's (or nn.ELU's) input by module name, as forward passes inside the block leave it (the
    last one's)."""
    inputs: dict[str, torch.Tensor] = {}
    hooks = [m.register_forward_pre_hook(lambda _m, args, name=name: inputs.__setitem__(name, args[0]))
             for name, m in net.named_modules() if isinstance(m, UNITS)]
    try:
        yield inputs
    finally:
        for h in hooks:
            h.remove()


def preactivations(net: nn.Module, states: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each nn.ReLU's (or nn.ELU's) input over `states`, flattened to [states, units] (a convolution's unit is a channel at a
    position)."""
    with unit_inputs(net) as inputs, torch.no_grad():
        net(states)
    return {name: x.reshape(x.shape[0], -1) for name, x in inputs.items()}


def firing(pre: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Which units of each layer's `preactivations` are above 0 on at least one state."""
    return {name: (x > 0).any(0) for name, x in pre.items()}


def alive_shares(net: nn.Module, states: torch.Tensor) -> dict[str, float]:
    """Each nn.ReLU's (or nn.ELU's) share of units (channels x positions) above 0 on at least one of `states`."""
    return {name: float(f.float().mean()) for name, f in firing(preactivations(net, states)).items()}


def output_spread(policy: Policy, states: torch.Tensor) -> float | None:
    """The evaluator's own measure (Policy.spread) over `states`: the largest spread of any one output (a
    policy's logits, a Q-network's values), 0 for a network that gives one output everywhere."""
    policy.watch()
    policy(states.numpy())
    return policy.spread()


def policy_entropy(policy: Policy, states: torch.Tensor) -> tuple[float, float] | None:
    """A softmax policy's mean entropy over `states` and the uniform policy's, in nats; None for a policy of
    another kind (a Q-network's argmax has no entropy)."""
    if policy.kind != "softmax":
        return None
    with torch.no_grad():
        logits = policy.net(states, None)[0].float()  # each state from the start: an LSTM's initial state
    return float(torch.distributions.Categorical(logits=logits).entropy().mean()), math.log(logits.shape[1])


def reinitialized(policy: Policy, seed: int) -> Policy:
    """A policy of the same kind on a fresh draw of `policy`'s network (each module's reset_parameters)."""
    net = copy.deepcopy(policy.net)
    torch.manual_seed(seed)
    for module in net.modules():
        if callable(reset := getattr(module, "reset_parameters", None)):
            reset()
    return Policy(net, policy.kind)


def random_states(env_id: str, n: int, seed: int) -> torch.Tensor:
    """`n` observations of uniformly random play, over as many episodes as it takes."""
    from distrl.envs import make_env
    env, states = make_env(env_id, "eval", seed=seed), []
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    while len(states) < n:
        states.append(np.asarray(obs))
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return torch.as_tensor(np.stack(states))


def main() -> None:
    import distrl
    from distrl.training import load_run_config
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--states", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", type=int, metavar="SEED", help="measure a fresh draw of the network, seeded so")
    p.add_argument("--out", type=Path, help="append a sitting to this result file")
    args = p.parse_args()
    env_id = load_run_config(args.run_dir, str(args.run_dir)).env
    policy = distrl.load_policy(args.run_dir)
    checkpoint, updates = Path(str(policy.checkpoint)).name, policy.updates
    if args.init is not None:
        policy, checkpoint, updates = reinitialized(policy, args.init), f"initialization, seed {args.init}", 0
    states = random_states(env_id, args.states, args.seed)
    print(f"{checkpoint} ({updates} updates), {len(states)} states of random play on {env_id}")
    shares = alive_shares(policy.net, states)
    for name, share in shares.items():
        print(f"  {name}: {share:.1%} of units fire")
    spread = output_spread(policy, states)
    print(f"  the outputs' largest spread over the states: {spread:.4g}")
    entropy = policy_entropy(policy, states)
    if entropy is not None:
        print(f"  the policy's mean entropy over the states: {entropy[0]:.4f} nats, the uniform policy's {entropy[1]:.4f}")
    if args.out:
        from bench import results
        from bench.runs import command_line
        head = results.header(command_line("bench.dead_units"), seed=args.seed, speed=False, env=env_id,
                              run=args.run_dir.name, checkpoint=checkpoint, updates=updates, states=len(states))
        rows = [{"layer": name, "alive_share": round(share, 4)} for name, share in shares.items()]
        rows.append({"output_spread": spread, **({"entropy": round(entropy[0], 4),
                                                  "uniform_entropy": round(entropy[1], 4)} if entropy else {})})
        with open(args.out, "a") as f:
            results.write_sitting(f, head, rows)


if __name__ == "__main__":
    main()
