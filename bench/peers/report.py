"""Markdown tables from bench/results/peers-*.jsonl, ready to paste into docs/notes/benchmarks.md.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.report [--results DIR] [--all-runs]
    [--out FILE]

Takes the latest run of each comparison (one run = one invocation of its script, one run_id; for
CartPole, the newest row of each contender and seed, so seeds may be run separately) and prints the
tables to stdout (`--out FILE` writes them there too; never into bench/results, which holds results
only). Ratios are distrl / peer; targets are the issue's, reported and never asserted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.peers import common as K
from bench.peers.cartpole_solve import summarize
from bench.results import read

ORDER = ("cartpole", "pong", "replay", "memory")


def rows_of(path: Path) -> list[dict]:
    """A results file's rows (bench/results.py), each with its sitting's command, date and machine unless it
    carries its own (a sitting may hold several runs of one day)."""
    return [{"command": s.header["command"], "date": s.header["date"],
             "machine": {**s.header["machine"], "commit": s.header["commit"]}, **r}
            for s in read(path) for r in s.rows]


def load(results: Path, all_runs: bool) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {}
    for name in ORDER:
        path = K.results_path(name, results)
        if not path.exists():
            continue
        rows = rows_of(path)
        if rows and not all_runs:
            if name == "cartpole":
                rows = _newest_per_seed(rows)
            else:
                latest = max(r["run_id"] for r in rows)
                rows = [r for r in rows if r["run_id"] == latest]
        runs[name] = rows
    return runs


def _newest_per_seed(rows: list[dict]) -> list[dict]:
    """CartPole's seeds may come from separate runs (a seed of all four contenders is ~8 minutes):
    the newest row of each (contender, seed), full runs over smoke runs."""
    full = [r for r in rows if not r["settings"].get("smoke")] or rows
    newest: dict[tuple, dict] = {}
    for r in sorted(full, key=lambda r: r["run_id"]):
        newest[(r["contender"], r.get("seed"))] = r
    return sorted(newest.values(), key=lambda r: (r.get("seed") or 0, r["run_id"]))


def _ratio(a, b, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}" if a and b else "n/a"


def _status(r: dict) -> str:
    return "" if r.get("status") == "ok" else f" ({r.get('status')})"


def _provenance(rows: list[dict]) -> list[str]:
    out = []
    for run_id in sorted({r["run_id"] for r in rows}):
        r = next(r for r in rows if r["run_id"] == run_id)
        m = r["machine"]
        v = ", ".join(f"{k} {val}" for k, val in m["versions"].items() if val)
        smoke = " **Smoke/quick settings: plumbing check, not figures to quote.**" \
            if r["settings"].get("smoke") or r["settings"].get("quick") else ""
        out.append(f"Command: `{r['command']}` — {r['date']}, {m['cpus_allowed']} of {m['cpu_count']} CPUs "
                   f"({m['cpu_model']}), {m['memory_gib']} GiB, Python {m['python']}; {v}"
                   + (f"; commit {m['commit'][:12]}" if m.get("commit") else "") + "." + smoke)
    return [*out, ""]


def _hyper(rows: list[dict]) -> list[str]:
    out, seen = ["Hyperparameters (nearest equivalents; each contender's source named):", ""], set()
    for r in rows:
        if r["contender"] in seen or not r.get("hyperparameters"):
            continue
        seen.add(r["contender"])
        h = dict(r["hyperparameters"])
        src = h.pop("source", "")
        out.append(f"- **{r['contender']}** — {src}: " + "; ".join(f"{k} {v}" for k, v in h.items()))
    return out + [""]


def _unsolved(r: dict) -> str:
    last = (r.get("evaluations") or [{}])[-1]
    return f"not solved (last evaluation {K.fmt(last.get('mean'), 1)} at {K.fmt(last.get('frames'))} frames)"


def _minutes(m: float) -> str:
    return f"{m:g} minutes" if m >= 1 else f"{m * 60:.0f} seconds"


def cartpole(rows: list[dict]) -> list[str]:
    s = rows[0]["settings"]
    out = ["## Peers 1: CartPole-v1, time to solve (`bench/peers/cartpole_solve.py`)", "",
           *_provenance(rows),
           f"Protocol (the same for every library): {s['protocol']}. Frame cap {s['max_frames']:,} per run "
           f"(unsolved past it); seeds {', '.join(map(str, sorted({r['seed'] for r in rows})))}. Wall time from before the library "
           "builds anything (Ray start-up included), evaluation time left out (training paused meanwhile).", "",
           "| contender | solved | median frames | median wall s | median start-up s | per seed: frames / wall s |",
           "|---|---|---|---|---|---|"]
    summary = summarize(rows)
    for name, sm in summary.items():
        per = "; ".join(
            f"seed {r['seed']}: " + (f"{K.fmt(r['frames_to_solve'])} / {K.fmt(r['wall_s_to_solve'], 1)}"
                                     if r.get("solved") else (_unsolved(r) if r["status"] == "ok" else r["status"]))
            for r in rows if r["contender"] == name)
        starts = [r["startup_s"] for r in rows if r["contender"] == name and r.get("startup_s") is not None]
        startup = sorted(starts)[len(starts) // 2] if starts else None
        out.append(f"| {name} | {sm['solved']}/{sm['runs']} | {K.fmt(sm['median_frames'])} | "
                   f"{K.fmt(sm['median_wall_s'], 1)} | {K.fmt(startup, 1)} | {per} |")
    out += ["", "Median wall time to solve, distrl / peer (target <= 0.5):", ""]
    for mine in ("distrl-apex", "distrl-apex-inline", "distrl-gorila"):
        for peer in ("sb3-dqn", "rllib-dqn"):
            if mine in summary and peer in summary:
                out.append(f"- {mine} / {peer}: {_ratio(summary[mine]['median_wall_s'], summary[peer]['median_wall_s'])}")
    return out + [""] + _hyper(rows)


def pong(rows: list[dict]) -> list[str]:
    s = rows[0]["settings"]
    out = ["## Peers 2: Pong training throughput (`bench/peers/pong_throughput.py`)", "", *_provenance(rows),
           f"{_minutes(s['minutes'])} of training each once ready, {s['cores']} cores, seed {s['seed']}; learning "
           f"after {s['learning_starts']:,} agent steps for all; replay capacity {s['capacity']:,}; frames are "
           f"{s['frames']}. Steady window: first record after learning started to the stop. Ape-X acts "
           "free-running (actors never wait for the learner); SB3 and RLlib do one update of 32 per 4 agent steps, so "
           "read env frames/s with the replay ratio beside it.", "",
           "| contender | env frames/s | learner updates/s | batch | replayed transitions/s "
           "| replayed per agent step | steady window s | whole-run frames/s | start-up s |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f, rep = r.get("env_frames_per_s"), r.get("replayed_per_s")
        ratio = rep / (f / 4) if f and rep is not None else None
        out.append(f"| {r['contender']}{_status(r)} | {K.fmt(f)} | "
                   f"{K.fmt(r.get('learner_updates_per_s'), 2)} | {K.fmt(r.get('batch_size'))} | "
                   f"{K.fmt(rep)} | {K.fmt(ratio, 2)} | {K.fmt(r.get('steady_s'))} | "
                   f"{K.fmt(r.get('whole_env_frames_per_s'))} | {K.fmt(r.get('startup_s'), 1)} |")
    by = {r["contender"]: r for r in rows if r.get("status") == "ok"}
    if "distrl-apex" in by:
        a = by["distrl-apex"]
        out += ["", "Env frames/s, distrl-apex / peer (targets: >= 3 vs RLlib, >= 1.5 vs SB3):", ""]
        for peer, target in (("rllib-dqn", 3.0), ("sb3-dqn", 1.5)):
            if peer in by:
                out.append(f"- vs {peer}: {_ratio(a.get('env_frames_per_s'), by[peer].get('env_frames_per_s'))} "
                           f"(whole run {_ratio(a.get('whole_env_frames_per_s'), by[peer].get('whole_env_frames_per_s'))};"
                           f" target {target})")
    return out + [""] + _hyper(rows)


def replay(rows: list[dict]) -> list[str]:
    s = rows[0]["settings"]
    out = ["## Peers 3: prioritized replay operations (`bench/peers/replay_ops.py`)", "", *_provenance(rows),
           f"{s['items']:,} items ({s['items_kind']}); add {s['add']}, sample {s['sample']}, update {s['sample']} "
           f"priorities, alpha {s['alpha']}, beta {s['beta']}; {s['rounds']:,} rounds each; through Ray "
           f"{s['inflight_adds']} adds in flight.", "",
           "| contender | adds/s (transitions) | us per add of 50 | sample+update rounds/s | ms per round "
           "| mixed rounds/s (add+sample+update) |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['contender']}{_status(r)} | {K.fmt(r.get('adds_per_s'))} | {K.fmt(r.get('add_call_us'), 1)} | "
                   f"{K.fmt(r.get('sample_update_rounds_per_s'))} | {K.fmt(r.get('sample_update_ms'), 3)} | "
                   f"{K.fmt(r.get('mixed_rounds_per_s'))} |")
    by = {r["contender"]: r for r in rows if r.get("status") == "ok"}
    out.append("")
    if "distrl" in by and "cpprb" in by:
        a, b = by["distrl"], by["cpprb"]
        out.append(f"- distrl / cpprb in-process, sample+update rounds/s: "
                   f"{_ratio(a['sample_update_rounds_per_s'], b['sample_update_rounds_per_s'])} (target >= 1); "
                   f"adds/s {_ratio(a['adds_per_s'], b['adds_per_s'])}; mixed {_ratio(a['mixed_rounds_per_s'], b['mixed_rounds_per_s'])}")
    if "distrl-ray" in by:
        r = by["distrl-ray"]
        out.append(f"- distrl through Ray, Atari transitions inserted: {K.fmt(r.get('atari_inserts_per_s'))}/s over "
                   f"{K.fmt(r.get('atari_items'))} (target >= 20,000/s); {K.fmt(r.get('atari_add_call_ms'), 2)} ms per "
                   f"add of 50, {K.fmt(r.get('atari_bytes_per_item'))} B stored per transition")
        if r.get("atari_pack_us_per_item") is not None:
            out.append(f"  - deflated by the sender (the actors), {K.fmt(r['atari_pack_us_per_item'], 1)} us per "
                       f"transition there; with the table deflating instead (before 2026-11-23): "
                       f"{K.fmt(r.get('atari_inserts_per_s_table_deflates'))}/s")
    return out + [""]


def memory(rows: list[dict]) -> list[str]:
    s = rows[0]["settings"]
    out = ["## Peers 4: memory per stored Atari transition (`bench/peers/memory.py`)", "", *_provenance(rows),
           f"{s['transitions']:,} transitions ({s['item']}) cycled from {s['distinct']:,} consecutive real ones; "
           "each contender in a fresh process; RSS growth over the count is the headline.", "",
           "| contender | stored | bytes per transition (RSS) | bytes per transition (library's arrays) | x distrl |",
           "|---|---|---|---|---|"]
    by = {r["contender"]: r for r in rows if r.get("status") == "ok"}
    base = by.get("distrl", {}).get("rss_per_transition")
    for r in rows:
        out.append(f"| {r['contender']}{_status(r)} | {K.fmt(r.get('stored'))} | {K.fmt(r.get('rss_per_transition'))} | "
                   f"{K.fmt(r.get('arrays_per_transition'))} | {_ratio(r.get('rss_per_transition'), base, 1)} |")
    if base:
        out += ["", f"- distrl: {base:,.0f} B per transition (target <= {s['target_bytes']:,} B: "
                    f"{'met' if base <= s['target_bytes'] else 'not met'})"]
    return out + [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=K.RESULTS)
    ap.add_argument("--all-runs", action="store_true", help="every run in the files, not only the latest")
    ap.add_argument("--out", type=Path, help="also write the Markdown to this file (not in bench/results)")
    args = ap.parse_args()
    runs = load(args.results, args.all_runs)
    if not runs:
        sys.exit(f"no peers-*.jsonl in {args.results}: run bench/peers/run_all.sh (or one of the comparisons) first")
    lines = ["# Peer benchmarks (`bench/peers/`)", "",
             "distrl side by side with stable-baselines3, RLlib and cpprb, all from one virtual environment "
             "(`bench/peers/setup.sh`), each contender in its own process pinned to the same CPUs. Figures only; "
             "the machine is shared and noisy, so compare rows of one table and re-run to check.", ""]
    for name in ORDER:
        if name in runs:
            lines += {"cartpole": cartpole, "pong": pong, "replay": replay, "memory": memory}[name](runs[name])
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        print(f"\n(written to {args.out})", file=sys.stderr)


if __name__ == "__main__":
    main()
