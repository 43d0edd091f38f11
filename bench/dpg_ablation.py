"""What costs Ape-X DPG per sample (issue 33): the paper's rule with one departure at a time, each for the
same wall-clock budget, with 2 actors on Ray, one after another on a quiet machine.

    bench/peers/.venv/bin/python -m bench.dpg_ablation --env HalfCheetah-v5 --seed 1 --budget-s 600
    bench/peers/.venv/bin/python -m bench.dpg_ablation --variants paper,relu --budget-s 1200 --seed 2
    bench/peers/.venv/bin/python -m bench.dpg_ablation --collect

The base is the apex-dpg-mujoco preset (Horgan et al. 2018, appendix D: tanh, hard target copies every
100 batches, sigma 0.3, n = 3, prioritized sampling and eviction, batch 512, Adam 1e-4) run with 2
actors, learning from 10,000 transitions (the paper's 50,000 takes 2 actors most of the budget) at 64
samples per insert (apex-dpg-small's ratio), evaluated every 1,000 updates (5 noiseless episodes, in
an evaluator process that shares the cores). Each variant changes the settings in VARIANTS, nothing
else. Writes bench/results/dpg-ablation-<env>-seed<S>-<budget>s.jsonl in bench/results.py's schema (the
sittings it held, each with the variants not run this time, then this call's sitting: one row per variant,
rewritten after each; `--no-speed-index` skips the speed index for trial runs) and prints a table: greedy
return (latest evaluation) at 5, 10 and 20 minutes where run, best, updates/s and frames/s. Asserts nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench import results
from bench.results import Sitting
from bench.runs import RACE_FRAMES, RESULTS, ROOT, command_line, distrl_rows, eval_summary, run_for

BASE = {"replay.min_size": 10_000, "replay.samples_per_insert": 64.0, "eval_every": 1000, "eval_episodes": 5,
        "log_every_s": 10.0, "actor.pull_every": 50, "actor.flush_size": 25, "ray.steps_per_call": 50,
        "ray.publish_every": 4}
VARIANTS: dict[str, dict] = {
    "paper": {},
    "relu": {"net.activation": "relu"},
    "polyak": {"learner.tau": 0.005},
    "sigma-0.1": {"actor.sigma": 0.1},
    "n-1": {"learner.n_step": 1},
    "uniform": {"replay.sampling": "uniform"},
    "fifo": {"replay.eviction": "fifo"},
    "batch-256": {"learner.batch_size": 256},
    "ratio-256": {"replay.samples_per_insert": 256.0},
    "lr-1e-3": {"learner.lr": 1e-3},
    "start-1000": {"replay.min_size": 1000},
    "twin": {"learner.twin_critics": True},
    "obs-norm": {"net.obs_norm": True},
    # the two changes that mattered alone (seed 1, 10 minutes), together
    "lr-1e-3-relu": {"learner.lr": 1e-3, "net.activation": "relu"},
    "td3-rule": {"learner.tau": 0.005, "learner.twin_critics": True, "learner.target_noise": 0.2,
                 "learner.policy_delay": 2, "actor.sigma": 0.1, "net.activation": "relu", "learner.lr": 1e-3,
                 "learner.n_step": 1, "replay.sampling": "uniform", "learner.actor_grad_clip": 0.0},
}
# Hopper-v5 from the other side: apex-dpg-td3-learner (1.36x TD3 on HalfCheetah, 259 on Hopper) with one of
# its departures from apex-dpg-small (3,111 on Hopper, 351 on HalfCheetah) at a time.
TD3_LEARNER_BASE = {"eval_every": 1000, "eval_episodes": 5, "log_every_s": 10.0}
SINGLE_CRITIC = {"learner.twin_critics": False, "learner.target_noise": 0.0, "learner.policy_delay": 1}
TWIN_CRITICS_BF16 = {**SINGLE_CRITIC, "learner.twin_critics": True, "learner.bf16": True}  # the default's values
TD3_LEARNER_VARIANTS: dict[str, dict] = {
    "td3-learner": {},
    "small-ratio": {"learner.batch_size": 128, "replay.samples_per_insert": 64.0, "inline.actor_steps": 2},
    "sigma-0.3": {"actor.sigma": 0.3},
    "start-1000": {"replay.min_size": 1000, "actor.random_frames": 0},
    "tanh-400-300": {"net.activation": "tanh", "net.actor_hidden": (400, 300), "net.critic_hidden": (400, 300),
                     "net.critic_action_layer": 1},
    "single-critic": SINGLE_CRITIC,
    # apex-dpg-one-critic with SAC's learning rate: Hopper-v5's evaluations swing (docs/notes/benchmarks.md, seed 2)
    "single-critic-lr-3e-4": {**SINGLE_CRITIC, "learner.lr": 3e-4},
    "hard-targets": {"learner.tau": 0.0, "learner.target_update": 100},
    # apex-dpg-one-critic with clipped double Q back (no smoothing, no delay): against Hopper-v5's swings
    "twin-critics-only": {**SINGLE_CRITIC, "learner.twin_critics": True},
    # apex-dpg-one-critic with DDPG's slower actor (1e-4 beside the critic's 1e-3): the same aim
    "actor-lr-1e-4": {**SINGLE_CRITIC, "learner.actor_lr": 1e-4},
    # apex-dpg-twin-critics with its hidden layers in bfloat16 (1.9x the learner's float32 updates/s on a CPU
    # with bf16 units, bench/dpg_learner_step.py): does it learn per update as float32 does?
    "twin-critics-bf16": TWIN_CRITICS_BF16,
    # apex-dpg-twin-critics-bf16 with a slower or a delayed actor: against Hopper-v5's swinging evaluations
    # (762-3,277 over each seed's last six minutes, docs/notes/benchmarks.md)
    "bf16-actor-lr-3e-4": {**TWIN_CRITICS_BF16, "learner.actor_lr": 3e-4},
    "bf16-policy-delay-2": {**TWIN_CRITICS_BF16, "learner.policy_delay": 2},
}
BASES = {"apex-dpg-mujoco": (BASE, VARIANTS), "apex-dpg-td3-learner": (TD3_LEARNER_BASE, TD3_LEARNER_VARIANTS)}
MARKS_S = (300, 600, 1200)


def setting(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def command(env: str, seed: int, preset: str, settings: dict, run_dir: Path) -> list[str]:
    sets = [x for k, v in {**BASES[preset][0], **settings}.items() for x in ("--set", f"{k}={setting(v)}")]
    return [sys.executable, "-m", "distrl.cli", "train", "apex-dpg", "--env", env, "--preset", preset,
            "--runtime", "ray", "--actors", "2", "--seed", str(seed), "--run-dir", str(run_dir), "--overwrite",
            "--quiet", "--max-frames", str(RACE_FRAMES), *sets]  # the clock ends a variant, not the preset's frames


def summary(rows: list[dict], budget_s: float) -> dict:
    return eval_summary(rows, {f"eval_at_{m}s": m for m in MARKS_S if m <= budget_s})


def earlier(out: Path) -> list[Sitting]:
    """The file's sittings, each with the newest row of its variants (a variant's row is in one sitting)."""
    if not out.exists():
        return []
    sittings = results.read(out)
    newest = {r["variant"]: i for i, s in enumerate(sittings) for r in s.rows}
    return [Sitting(s.header, [r for r in s.rows if newest[r["variant"]] == i]) for i, s in enumerate(sittings)]


def kept_apart_from(kept: list[Sitting], rows: list[dict]) -> list[Sitting]:
    """The earlier sittings without the variants this call ran again (a variant that failed keeps its row)."""
    ran = {r["variant"] for r in rows}
    left = [Sitting(s.header, [r for r in s.rows if r["variant"] not in ran]) for s in kept]
    return [s for s in left if s.rows]


def write(out: Path, kept: list[Sitting], head: dict, rows: list[dict]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        for sitting in kept_apart_from(kept, rows):
            results.write_sitting(f, sitting.header, sitting.rows)
        if rows:  # a call whose variants all failed adds no sitting
            results.write_sitting(f, head, rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="HalfCheetah-v5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=600.0)
    p.add_argument("--preset", default="apex-dpg-mujoco", choices=sorted(BASES),
                   help="the base: the paper's rule, or TD3's learner inside Ape-X (its own variants)")
    p.add_argument("--variants", help="comma-separated subset of the base's variants (default: all of them)")
    p.add_argument("--run-root", type=Path, default=ROOT / "runs" / "bench-dpg-ablation")
    p.add_argument("--collect", action="store_true", help="run nothing: rebuild the results from --run-root")
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    args = p.parse_args()
    base, variants = BASES[args.preset]
    names = [n for n in (args.variants or ",".join(variants)).split(",") if n]
    if unknown := [n for n in names if n not in variants]:
        p.error(f"unknown variant(s) {', '.join(unknown)} for {args.preset}: choose from {', '.join(variants)}")
    subject = args.env.replace('/', '-') + ("" if args.preset == "apex-dpg-mujoco" else f"-{args.preset}")
    tag = f"dpg-ablation-{subject}-seed{args.seed}-{args.budget_s:.0f}s"
    out = RESULTS / f"{tag}.jsonl"
    kept = earlier(out)  # variants not run this time keep their rows, each in its own sitting
    head = results.header(command_line("bench.dpg_ablation"), preset=args.preset, seed=args.seed,
                          speed=not (args.no_speed_index or args.collect), env=args.env, budget_s=args.budget_s,
                          base=base)
    if args.collect:
        head["speed_index_note"] = "not measured: --collect rebuilds the rows of runs made before"
    rows: list[dict] = []
    for name in names:
        run_dir, log = args.run_root / f"{tag}-{name}", args.run_root / f"{tag}-{name}.log"
        if not args.collect:
            print(f"=== {name}: {variants[name] or args.preset}, {args.budget_s:.0f} s", flush=True)
            run_for(command(args.env, args.seed, args.preset, variants[name], run_dir), args.budget_s, log)
        if (run_dir / "metrics.csv").exists():
            curve = [r for r in distrl_rows(run_dir) if r["wall_s"] <= args.budget_s + 1]
            rows.append({"variant": name, "settings": variants[name], **summary(curve, args.budget_s)})
        write(out, kept, head, rows)  # after each variant: a stopped sweep keeps what it ran
    every = [*(r for s in kept_apart_from(kept, rows) for r in s.rows), *rows]
    cols = [c for c in (f"eval_at_{m}s" for m in MARKS_S) if any(c in r for r in every)]
    print("| " + " | ".join(["variant", *cols, "best", "updates/s", "frames/s"]) + " |")
    for r in every:
        cells = ["-" if r.get(c) is None else f"{r[c]:,.0f}" for c in (*cols, "best_eval")]
        print(f"| {r['variant']} | " + " | ".join(cells) + f" | {r['updates_per_s']} | {r['frames_per_s']} |")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
