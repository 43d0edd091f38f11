"""Which term of A3C's loss drives its shared torso's ReLU units below 0 (issue 59: on Pong the first
convolution or the dense layer lost most of its units within minutes at each step size tried).

Runs A3C's own parts in this one process (the builder's shared RMSProp store and its actor-learners, taking
rollouts in turn, as the paper's threads serialised) and, every `--probe-every` updates, takes `--rollouts`
rollouts of the current policy on an env of its own. Each rollout's gradient is split into the loss's
three terms (policy, value, -beta * entropy), each clipped by the factor the whole gradient was and divided
by the RMSProp denominator the whole gradient's update would meet, so the three steps sum to the update the
store would make of that rollout. The first-order change each term's mean step makes in each ReLU layer's
pre-activations over fixed states of random play is that term's push on the layer: below 0 drives units
toward dying (a ReLU at 0 passes no gradient back).

    .venv/bin/python -m bench.loss_terms [--minutes 15] [--set learner.eps=1e-5] [--out bench/results/F.jsonl]

Each probe also takes each rollout's whole update alone: a unit's drift (the mean of its change over the
rollouts) against its noise (their standard deviation), the layer's medians. A unit whose noise per update
is k times its drift is moved more by chance than by the drift for k^2 updates, and a ReLU unit that chance
takes below 0 on every state stays there.

Prints a line a layer each probe: its share of units that fire, its mean pre-activation, each term's
push per update, and its units' drift and noise; at the end each term's push averaged over the probes, with
its standard error, beside the mean pre-activation's actual change per update and one update's spread. With
`--out`, appends a sitting (with the speed index) with a row a layer a probe. Asserts nothing."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, jvp

from bench.dead_units import firing, preactivations, random_states, unit_inputs
from distrl.algos.actor_critic import a3c_terms
from distrl.algos.q_learning import nstep_returns

TERMS = ("policy", "value", "entropy")


def signed_terms(terms: dict[str, torch.Tensor], entropy_beta: float) -> dict[str, torch.Tensor]:
    """The loss's three summands: it is their sum (the entropy enters as -beta * entropy)."""
    return {"policy": terms["policy"], "value": terms["value"], "entropy": -entropy_beta * terms["entropy"]}


def term_steps(net: nn.Module, summands: dict[str, torch.Tensor], stats: torch.Tensor, *, lr: float, decay: float,
               eps: float, clip: float) -> dict[str, torch.Tensor]:
    """Each summand's share of the flat step the store's RMSProp (eps inside the square root) would take on
    the whole loss's gradient, clipped to norm `clip` as the actor-learner clips it. The shares sum to it."""
    params = list(net.parameters())
    grads = {}
    for name, term in summands.items():
        parts = torch.autograd.grad(term, params, retain_graph=True, allow_unused=True)
        grads[name] = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1).double()
                                 for g, p in zip(parts, params)])
    total = sum(grads.values())
    assert isinstance(total, torch.Tensor)
    scale = min(1.0, clip / (float(total.norm()) + 1e-6))  # torch's clip_grad_norm_
    denom = torch.sqrt(decay * stats.double() + (1.0 - decay) * (scale * total) ** 2 + eps)
    return {name: lr * scale * g / denom for name, g in grads.items()}


def unit_changes(net: nn.Module, states: torch.Tensor, steps: dict[str, torch.Tensor]) -> dict[str, dict[str, torch.Tensor]]:
    """{step: {layer: each unit's mean change over `states`}} when the flat step alone is taken (parameters
    minus the step), to first order: a Jacobian-vector product, exact where a difference of two float32
    forward passes would lose steps of 1e-6 in rounding."""
    names = [name for name, _ in net.named_parameters()]
    params = tuple(p.detach() for p in net.parameters())
    layers: list[str] = []

    def forward(*values: torch.Tensor) -> tuple[torch.Tensor, ...]:
        with unit_inputs(net) as inputs:
            functional_call(net, dict(zip(names, values)), (states,))
        layers[:] = inputs  # jvp returns a tuple: the names, in the order the pass met them
        return tuple(inputs.values())

    out: dict[str, dict[str, torch.Tensor]] = {}
    for name, step in steps.items():
        tangents, offset = [], 0
        for p in params:
            tangents.append(-step[offset:offset + p.numel()].reshape(p.shape).to(p.dtype))
            offset += p.numel()
        _, moved = jvp(forward, params, tuple(tangents))
        out[name] = {layer: d.reshape(d.shape[0], -1).mean(0) for layer, d in zip(layers, moved)}
    return out


def pushes(net: nn.Module, states: torch.Tensor, steps: dict[str, torch.Tensor]) -> dict[str, dict[str, float]]:
    """{step: {layer: mean change of the layer's pre-activations}} (over its units and `states`)."""
    return {name: {layer: float(u.mean()) for layer, u in units.items()}
            for name, units in unit_changes(net, states, steps).items()}


def drift_and_noise(changes: list[dict[str, torch.Tensor]],
                    fire: dict[str, torch.Tensor]) -> dict[str, tuple[float, float] | None]:
    """{layer: (median over its firing units of |mean change|, median over them of the change's standard
    deviation)} over the updates in `changes` (a unit's change per update, an update a dict); None for a
    layer with no unit firing. A unit whose noise is k times its drift moves more by chance than by the
    drift for k^2 updates, and a ReLU unit that chance takes below 0 on every state stays there (no
    gradient passes it back)."""
    out: dict[str, tuple[float, float] | None] = {}
    for layer in changes[0]:
        per_update = torch.stack([c[layer] for c in changes])[:, fire[layer]]
        out[layer] = (float(per_update.mean(0).abs().median()), float(per_update.std(0).median())) \
            if per_update.shape[1] else None
    return out


class Prober:
    """Rollouts of the current policy on its own env, as an actor-learner takes them (t_max steps or to an
    episode's end, n-step returns bootstrapped from V of the last state), for their terms' gradients."""

    def __init__(self, env: Any, t_max: int, gamma: float, reward_scale: float, seed: int):
        self.env, self.t_max, self.gamma, self.reward_scale = env, t_max, gamma, reward_scale
        self.obs, _ = env.reset(seed=seed)

    def rollout(self, net: nn.Module, value_coef: float, reduction: str) -> dict[str, torch.Tensor]:
        logits, values, actions, rewards, dones = [], [], [], [], []
        for _ in range(self.t_max):
            lg, v, _ = net(torch.as_tensor(self.obs)[None], None)
            action = int(torch.distributions.Categorical(logits=lg[0]).sample())
            next_obs, reward, terminated, truncated, info = self.env.step(action)
            logits.append(lg[0])
            values.append(v[0])
            actions.append(action)
            rewards.append(float(reward) * self.reward_scale)
            dones.append(float(terminated or info.get("life_loss", False)))
            if terminated or truncated:
                break
            self.obs = next_obs
        with torch.no_grad():
            bootstrap = net(torch.as_tensor(next_obs)[None], None)[1][0]
        if terminated or truncated:
            self.obs, _ = self.env.reset()
        returns = nstep_returns(torch.tensor(rewards), torch.tensor(dones), bootstrap, self.gamma)
        return a3c_terms(torch.stack(logits), torch.tensor(actions), returns, torch.stack(values), value_coef,
                         reduction)


def probe(net: nn.Module, prober: Prober, store: Any, cfg: Any, states: torch.Tensor, fire: dict[str, torch.Tensor],
          rollouts: int) -> tuple[dict[str, dict[str, float]], dict[str, tuple[float, float] | None], dict[str, float]]:
    """({term: {layer: push per update}}, the mean over `rollouts` rollouts of each term's step; {layer: its
    firing units' drift and noise per update} and {layer: the standard deviation of one whole update's push},
    both from each rollout's whole update alone). `fire`: the units that fire now (bench.dead_units.firing)."""
    stats = torch.as_tensor(store.state_dict()["stats"])
    mean: dict[str, torch.Tensor] = {}
    updates: dict[str, torch.Tensor] = {}
    for r in range(rollouts):
        terms = signed_terms(prober.rollout(net, cfg.rl.value_coef, cfg.rl.reduction), cfg.rl.entropy_beta)
        steps = term_steps(net, terms, stats, lr=store.current_lr(), decay=store.decay, eps=store.eps,
                           clip=cfg.rl.grad_clip)
        updates[str(r)] = sum(steps.values())  # type: ignore[assignment]
        for name, step in steps.items():
            mean[name] = mean.get(name, 0) + step / rollouts
    each = list(unit_changes(net, states, updates).values())
    spread = {layer: float(torch.stack([u[layer].mean() for u in each]).std()) for layer in fire}
    return pushes(net, states, mean), drift_and_noise(each, fire), spread


def main() -> None:
    from distrl.architectures.a3c.builder import A3C
    from distrl.config import build_config
    from distrl.envs import make_env
    from distrl.params.param_server import unflatten_into
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="ALE/Pong-v5")
    p.add_argument("--preset", default="a3c-atari")
    p.add_argument("--actors", type=int, default=2, help="actor-learners taking rollouts in turn (bench.pong's 2)")
    p.add_argument("--minutes", type=float, default=15.0)
    p.add_argument("--probe-every", type=int, default=500, help="updates between probes")
    p.add_argument("--rollouts", type=int, default=32, help="rollouts a probe")
    p.add_argument("--states", type=int, default=256, help="states of random play the pushes are measured on")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--initial-ms", type=float, default=0.0,
                   help="start the store's RMSProp mean squares here (the store's 0; TensorFlow's RMSProp starts at 1)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", type=Path, help="append a sitting to this result file")
    args = p.parse_args()
    torch.set_num_threads(1)
    sets = dict(s.split("=", 1) for s in args.set)
    cfg = build_config("a3c", args.env, args.preset, {"actors": args.actors, "seed": args.seed, **sets})
    builder = A3C(cfg)
    store = builder.create_shared_store()
    if args.initial_ms:
        state = store.state_dict()
        store.load_state_dict({**state, "stats": torch.full_like(state["stats"], args.initial_ms)})
    workers = [builder.make_actor_learner(i, store) for i in range(cfg.actors)]
    probe_env = make_env(cfg.env, "train", seed=args.seed + 1000, max_episode_frames=cfg.max_episode_frames)
    try:
        net = builder.make_net()
        prober = Prober(probe_env, cfg.rl.t_max, cfg.rl.gamma, cfg.rl.reward_scale, args.seed + 1000)
        states = random_states(cfg.env, args.states, args.seed)
        head = None
        if args.out:
            from bench import results
            from bench.runs import command_line
            head = results.header(command_line("bench.loss_terms"), preset=args.preset, seed=args.seed,
                                  env=cfg.env, actors=cfg.actors, lr=cfg.learner.lr, eps=cfg.learner.eps,
                                  initial_ms=args.initial_ms,
                                  rollouts=args.rollouts, states=args.states)
        rows: list[dict[str, Any]] = []
        t0, next_probe, frames = time.time(), 0, 0
        while True:
            updates = store.updates()
            if updates >= next_probe:
                unflatten_into(net, store.pull()[0])
                pre = preactivations(net, states)
                fire = firing(pre)
                alive = {k: float(f.float().mean()) for k, f in fire.items()}
                means = {k: float(v.mean()) for k, v in pre.items()}
                push, spread, update_sd = probe(net, prober, store, cfg, states, fire, args.rollouts)
                minutes = (time.time() - t0) / 60
                for layer in alive:
                    rows.append({"updates": updates, "minutes": round(minutes, 2),
                                 "frames": frames, "layer": layer, "alive_share": round(alive[layer], 4),
                                 "mean_preactivation": means[layer],
                                 **{f"push_{t}": push[t][layer] for t in TERMS}, "update_sd": update_sd[layer],
                                 **dict(zip(("unit_drift", "unit_noise"), spread[layer] or (None, None)))})
                    print(f"{minutes:5.1f} min {updates:>7,} updates  {layer:14s} {alive[layer]:6.1%} fire  "
                          f"mean {means[layer]:+.4f}  " +
                          "  ".join(f"{t} {push[t][layer]:+.2e}" for t in TERMS) +
                          ("  firing units' drift {:.1e}, noise {:.1e}".format(*spread[layer]) if spread[layer]
                           else ""), flush=True)
                next_probe = updates + args.probe_every
                if minutes >= args.minutes:
                    break
            for w in workers:
                w.run(1, frames)
            frames = sum(int(w.counters()["frames"]) for w in workers)
        summarize(rows)
        if args.out and head is not None:
            from bench import results
            with open(args.out, "a") as f:
                results.write_sitting(f, head, rows)
    finally:
        for w in workers:
            w.close()
        probe_env.close()
        store.close()
        store.unlink()


def summarize(rows: list[dict[str, Any]]) -> None:
    """A layer a line: its mean pre-activation's actual change per update over the run, each term's push
    averaged over the probes with its standard error, and one update's own spread (its standard deviation,
    the median over the probes). Where the spread is many times the change, chance moves the units."""
    for layer in dict.fromkeys(r["layer"] for r in rows):
        mine = [r for r in rows if r["layer"] == layer]
        change = mine[-1]["mean_preactivation"] - mine[0]["mean_preactivation"]
        per_update = change / max(1, mine[-1]["updates"] - mine[0]["updates"])
        terms = {t: torch.tensor([r[f"push_{t}"] for r in mine], dtype=torch.float64) for t in TERMS}
        se = {t: float(x.std() / len(x) ** 0.5) if len(x) > 1 else float("nan") for t, x in terms.items()}
        spread = float(torch.tensor([r["update_sd"] for r in mine]).median())
        ratios = sorted(r["unit_noise"] / r["unit_drift"] for r in mine if r["unit_drift"])
        print(f"{layer}: mean pre-activation {mine[0]['mean_preactivation']:+.4f} -> {mine[-1]['mean_preactivation']:+.4f}"
              f" ({per_update:+.2e} an update over {mine[-1]['updates']:,}); the terms' pushes over {len(mine)} probes: " +
              "  ".join(f"{t} {float(x.mean()):+.2e} +- {se[t]:.1e}" for t, x in terms.items()) +
              f"; one update's spread {spread:.1e}" +
              (f"; a firing unit's noise / drift per update, median over probes: {ratios[len(ratios) // 2]:.1f}"
               if ratios else ""))


if __name__ == "__main__":
    main()
