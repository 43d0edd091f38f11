"""Inline runs are deterministic for a seed: this prints, for every architecture and its main options, a
short inline run's final counters, returns and a digest of its last checkpoint, so a refactor of the
runtime can show "bit-identical before and after" (issue 35) by running it on both commits.

    python -m bench.inline_digests                      # writes bench/results/inline-digests-<commit>.jsonl
    python -m bench.inline_digests --compare A.jsonl B.jsonl

The cases are each architecture's (tests/cases/<package>.py: `digests`), on CartPole-v1 or Pendulum-v1,
seed 1, a few thousand frames, a checkpoint every 200 updates. The file follows bench/results.py's
schema: one sitting, its header with the commit (`tree`: the short commit, "-dirty" when src/ had
changes) and torch's version, one row per case (`--no-speed-index` skips the speed index, which these
digests do not need). Asserts nothing; --compare prints what differs."""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import torch

from bench import results
from bench.runs import RESULTS, ROOT, command_line

BASE = {"seed": 1, "eval_episodes": 3, "log_every_s": 60.0, "checkpoint_every": 200}


def all_cases() -> dict[str, tuple[str, str, dict]]:
    """case -> (architecture, env, overrides): each registered architecture's, from its test cases
    (tests/cases/<package>.py), in the order of their names."""
    from tests.cases import cases, names
    return {case: (arch, env, overrides) for arch in names() for case, (env, overrides) in cases(arch).digests.items()}


def run_case(name: str) -> dict:
    from distrl import config as C
    from distrl.checkpoint import latest_checkpoint, read_checkpoint, state_digest
    from distrl.training import train
    architecture, env, overrides = all_cases()[name]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = C.build_config(architecture, env, overrides={**BASE, **overrides, "run_dir": str(Path(tmp) / "run")})
        summary = train(cfg, live=False)
        data = read_checkpoint(latest_checkpoint(Path(tmp) / "run"))
    return {"frames": summary["frames"], "updates": summary.get("updates"), "eval": summary.get("eval_return_mean"),
            "checkpoint_step": data["meta"]["step"], "counters": data["counters"],
            "returns_digest": state_digest(data["returns"]), "roles_digest": state_digest(data["roles"]),
            "rng_digest": state_digest(data.get("rng"))}


def digests(path: Path) -> dict:
    """A digests file (bench/results.py's schema) as {"commit": its tree, "cases": {name: figures}}."""
    (sitting,) = results.read(path)
    tree = sitting.header.get("tree") or (sitting.header["commit"] or "?")[:7]
    return {"commit": tree, "cases": {r["case"]: {k: v for k, v in r.items() if k != "case"} for r in sitting.rows}}


def compare(a: Path, b: Path) -> None:
    """A case is identical when every figure of `a` is in `b` unchanged; counters `b` adds are named."""
    ra, rb = digests(a), digests(b)
    print(f"| case | {ra['commit']} | {rb['commit']} |\n|---|---|---|")
    for name in ra["cases"]:
        x, y = ra["cases"][name], rb["cases"].get(name) or {}
        differ = [k for k in x if k != "counters" and x[k] != y.get(k)]
        counters = y.get("counters", {})
        differ += [f"counters[{k}]" for k in x["counters"] if x["counters"][k] != counters.get(k)]
        added = sorted(set(counters) - set(x["counters"]))
        same = "DIFFERS: " + ", ".join(differ) if differ else "identical"
        print(f"| {name} | {x['roles_digest'][:12]} | {same}{' (new counters: ' + ', '.join(added) + ')' if added else ''} |")


def uncovered() -> list[str]:
    """Registered architectures (distrl's registry) with no digest case: each needs one."""
    from tests.cases import cases, names
    return [arch for arch in names() if not cases(arch).digests]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="", help="comma-separated case names (default: every case)")
    p.add_argument("--compare", nargs=2, type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s)")
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    if missing := uncovered():
        p.error(f"no digest case for the architecture(s) {', '.join(missing)}: add one to tests/cases/<package>.py")
    torch.set_num_threads(1)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip())
    tag = commit + ("-dirty" if dirty else "")
    head = results.header(command_line("bench.inline_digests"), speed=not args.no_speed_index, tree=tag,
                          torch=torch.__version__)
    cases = {}
    for name in args.cases.split(",") if args.cases else all_cases():
        cases[name] = run_case(name)
        print(name, cases[name]["frames"], cases[name]["updates"], cases[name]["roles_digest"][:16], flush=True)
    out = args.out or RESULTS / f"inline-digests-{tag}.jsonl"
    with open(out, "w") as f:
        results.write_sitting(f, head, [{"case": name, **figures} for name, figures in cases.items()])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
