"""How much of an A3C run's steps its RMSProp epsilon takes: for each layer of the latest checkpoint's shared
store, the median of the running mean square v, the share of parameters whose v is below eps, and the median
of sqrt(v / (v + eps)), the size of the step the paper's rule (eps inside the square root) takes against the
normalized step it would take with eps near 0. A3C's eps of 0.1 floors the denominator at sqrt(0.1) ~ 0.32, so
where squared gradients stay far below 0.1 the rule is plain SGD at lr / 0.32 (issue 59: A3C's 2-core Pong run).

    .venv/bin/python -m bench.step_floor RUN_DIR [--out bench/results/F.jsonl]

Prints a line a layer; with `--out`, also appends a sitting of bench/results/ (no speed index: nothing here
is timed). Asserts nothing."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch


def eps_shares(stats: torch.Tensor, shapes: dict[str, list[int]], eps: float) -> list[dict[str, object]]:
    """A row a layer of the flat `stats` (v, laid out in `shapes`' order, as the store flattens the network)."""
    rows, offset = [], 0
    for name, shape in shapes.items():
        n = math.prod(shape)
        v = stats[offset:offset + n].double()
        offset += n
        rows.append({"layer": name, "params": n, "median_v": float(v.median()),
                     "below_eps": round(float((v < eps).double().mean()), 4),
                     "median_step_ratio": round(float(torch.sqrt(v / (v + eps)).median()), 4)})
    if offset != stats.numel():
        raise ValueError(f"the shapes hold {offset} parameters, the statistics {stats.numel()}")
    return rows


def main() -> None:
    from distrl.checkpoint import latest_checkpoint, read_checkpoint
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--out", type=Path, help="append a sitting to this result file")
    args = p.parse_args()
    path = latest_checkpoint(args.run_dir)
    data = read_checkpoint(path)
    meta, store = data["meta"], data["roles"].get("ps", [{}])[0]
    if meta.get("store") != "shared" or "stats" not in store:
        raise SystemExit(f"{path} is not from an A3C-family run on its shared store (ps.store=shared): "
                         "only that store keeps one RMSProp mean square a parameter")
    eps = float(store["eps"])
    rows = eps_shares(store["stats"], meta["shapes"], eps)
    print(f"{path} (step {meta['step']}), RMSProp eps {eps:g} inside the square root:")
    for r in rows:
        print(f"  {r['layer']:28s} {r['params']:>8,} params  median v {r['median_v']:.2e}  "
              f"{r['below_eps']:.1%} below eps  median step {r['median_step_ratio']:.4f} of a normalized one")
    if args.out:
        from bench import results
        from bench.runs import command_line
        head = results.header(command_line("bench.step_floor"), seed=None, speed=False, env=meta["env"],
                              run=args.run_dir.name, checkpoint=path.name, updates=meta["step"], eps=eps)
        with open(args.out, "a") as f:
            results.write_sitting(f, head, rows)


if __name__ == "__main__":
    main()
