"""The docs' result tables and curves, rendered from bench/results/ (no result number in the docs is typed
by hand).

A page marks each rendered block with a comment that names what goes in it:

    <!-- report: index arch=apex -->
    ...the table, rewritten by this module...
    <!-- /report -->

    python -m bench.report            # rewrite every block of README.md and docs/**/*.md, and the curves
    python -m bench.report --check    # name each block that differs from what the files give; exit 1

Blocks: `index` (the results index: one row per system and env, mean and spread over seeds; `arch=`
keeps one architecture's rows), `race file=NAME` (one race file's contenders side by side, with the
sittings they come from), `presets arch=NAME` (an architecture's presets and their sources, from the
code), `reruns files=A,B` (documented commands run again beside their index rows), `matrix` (every
system on every MinAtar game, seed 1), `matrix-cells` (each of its cells in full), `matrix-frames` (its
training returns at equal frames), `matrix-seeds` (the seeded systems' seeds side by side), `atari game=pong`
(every Atari run of a game: its greedy crossings of -10, 0 and 19).
`tests/test_report.py` runs the check in the quick tier.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.results import Sitting, read
from bench.runs import RESULTS, ROOT, params_wall_s

BLOCK = re.compile(r"(<!-- report: *(?P<spec>[^>]*?) *-->\n)(?P<body>.*?)(<!-- /report -->)", re.S)
PAGES = ("README.md", "docs")
FIGURES = ROOT / "docs" / "figures"
ARCH_NAMES = {"dqn": "DQN", "gorila": "Gorila", "a3c": "A3C", "ba3c": "BA3C", "apex": "Ape-X",
              "apex-dpg": "Ape-X DPG", "r2d2": "R2D2"}


@dataclass(frozen=True)
class Headline:
    """One row of the results index: a system on an env, over the seeds whose files hold it."""
    arch: str
    env: str
    files: tuple[str, ...]      # one per seed
    contender: str
    command: str                # the command that gives the number (SEED stands for each seed)


def _minatar(arch: str, contender: str, game: str, seeds: tuple[int, ...] = (1,)) -> Headline:
    return Headline(arch, f"MinAtar/{game}-v1", tuple(f"minatar-{game}-seed{s}.jsonl" for s in seeds), contender,
                    f"distrl train {arch} --env MinAtar/{game}-v1 --runtime ray --actors 2 --seed SEED --max-time 15m")


def _mujoco(env: str, seeds: tuple[int, ...]) -> Headline:
    return Headline("apex-dpg", env, tuple(f"continuous-{env}-seed{s}.jsonl" for s in seeds),
                    "distrl-apex-dpg-twin-critics-bf16",
                    f"distrl train apex-dpg --env {env} --runtime ray --actors 2 --seed SEED --max-time 20m "
                    "--max-frames 10000000")


# The MinAtar matrix's systems with seeds 2 and 3 too (issue 58: Ape-X and the best other system)
SEEDED = ("apex", "ba3c")
MATRIX_SEEDS = (1, 2, 3)

HEADLINES: tuple[Headline, ...] = (
    *(_minatar(a, c, g, MATRIX_SEEDS if a in SEEDED else (1,))
      for g in ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")
      for a, c in (("apex", "distrl-apex"), ("gorila", "distrl-gorila"), ("a3c", "distrl-a3c"),
                   ("ba3c", "distrl-ba3c"))),  # Ape-X's and BA3C's rows take seeds 2 and 3 where run
    _minatar("r2d2", "distrl-r2d2", "Breakout"),
    _minatar("r2d2", "distrl-r2d2", "Asterix"),
    _minatar("r2d2", "distrl-r2d2", "SpaceInvaders"),
    _minatar("dqn", "distrl-dqn", "Breakout"),
    _minatar("dqn", "distrl-dqn", "Asterix"),
    _minatar("r2d2", "distrl-r2d2", "Seaquest"),
    _minatar("dqn", "distrl-dqn", "Seaquest"),
    _minatar("dqn", "distrl-dqn", "SpaceInvaders"),
    _minatar("dqn", "distrl-dqn", "Freeway"),
    _minatar("r2d2", "distrl-r2d2", "Freeway"),
    _mujoco("HalfCheetah-v5", (1, 2, 3)), _mujoco("Hopper-v5", (1, 2, 3)), _mujoco("Walker2d-v5", (1,)),
    _mujoco("Ant-v5", (1,)),
)


@dataclass
class Result:
    """One contender's summary in one sitting: the numbers a table shows and where they come from."""
    row: dict
    sitting: Sitting
    file: str

    def get(self, key: str, default=None):
        return self.row.get(key, default)

    def late_mean(self) -> float | None:
        """The mean greedy evaluation over the budget's last tenth (the last one where none fell in it): one
        evaluation of 10 episodes swings too far to stand for a run (MinAtar Breakout's went 18.7 -> 30.7
        in its last minute of 2026-11-24)."""
        points = [(r["wall_s"], r["eval_mean"]) for r in self.sitting.of(self.row["contender"])
                  if not r.get("summary") and r.get("eval_mean") is not None and r.get("wall_s") is not None]
        if not points:
            return None
        budget = self.get("budget_s") or points[-1][0]
        late = [e for t, e in points if t >= 0.9 * budget] or [points[-1][1]]
        return statistics.mean(late)

    def best_eval(self) -> float | None:
        evals = [x["eval_mean"] for x in self.sitting.of(self.row["contender"]) if x.get("eval_mean") is not None]
        return max(evals, default=None)


def summary(file: str, contender: str) -> Result | None:
    """The contender's last summary row in `file` (a race file keeps one per contender), None if none (or no
    such file: a seed not run yet)."""
    found = None
    if not (RESULTS / file).exists():
        return None
    for sitting in read(RESULTS / file):
        for row in sitting.of(contender):
            if row.get("summary"):
                found = Result(row, sitting, file)
    return found


# ---- formatting -------------------------------------------------------------------------------
def number(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f} min"


def machine(sittings: list[Sitting]) -> str:
    """Where rows were made: each sitting's day, CPU (where its header has one) and speed index ("not
    measured" before the index)."""
    parts = dict.fromkeys(", ".join([s.day, *([s.cpu] if s.cpu else []),
                                     f"speed {s.speed:.2f}" if s.speed is not None else "speed not measured"])
                          for s in sittings)
    return "; ".join(parts)


def span(sittings: list[Sitting]) -> str:
    """Where a table of many sittings was made, in one line: the days, the CPUs and the range of speed indices."""
    unique = list({id(s): s for s in sittings}.values())
    days = sorted(s.day for s in unique)
    speeds = [s.speed for s in unique if s.speed is not None]
    text = f"{len(unique)} sittings from {days[0]} to {days[-1]}" if len(unique) > 1 else machine(unique)
    if len(unique) > 1 and (cpus := sorted({s.cpu for s in unique if s.cpu})):
        text += f" on {' and '.join(cpus)}"
    if len(unique) > 1 and speeds:
        text += f", speed index {min(speeds):.2f} to {max(speeds):.2f}"
    if len(unique) > 1 and (before := len(unique) - len(speeds)):
        text += f" ({before} made before the index)"
    return text


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


# ---- blocks -------------------------------------------------------------------------------------
def index(arch: str = "") -> str:
    """The results index: each headline's greedy return at the budget, mean ± std over its seeds."""
    return index_of([h for h in HEADLINES if not arch or h.arch == arch])


def index_of(headlines) -> str:
    rows = []
    for h in headlines:
        found = [r for f in h.files if (r := summary(f, h.contender)) is not None]
        scores = [x for r in found if (x := r.late_mean()) is not None]
        if not scores:
            rows.append([ARCH_NAMES[h.arch], h.env, "no result yet", "-", "-", "-", "-", f"`{h.command}`"])
            continue
        spread = f" ± {number(statistics.stdev(scores))}" if len(scores) > 1 else ""
        seeds = ", ".join(str(r.sitting.header.get("seed") or r.get("seed")) for r in found)
        budget = found[0].get("budget_s")
        frames = statistics.mean(r.get("frames_at_budget") or 0 for r in found)
        command = h.command.replace("SEED", seeds) if len(found) == 1 else h.command
        rows.append([ARCH_NAMES[h.arch], h.env, number(statistics.mean(scores)) + spread, seeds,
                     minutes(budget), number(frames), machine([r.sitting for r in found]), f"`{command}`"])
    return table(["System", "Env", "Greedy return, last tenth", "Seeds", "Wall time", "Frames", "Machine", "Command"], rows)


def race(file: str, page: Path = ROOT / "README.md") -> str:
    """One race file's contenders side by side, each from its own summary row, and which sittings; then
    their curves (`curves` draws them)."""
    sittings = read(RESULTS / file)
    contenders = list(dict.fromkeys(c for s in sittings for c in s.contenders()))
    results = [r for c in contenders if (r := summary(file, c)) is not None]
    rows = []
    for r in results:
        reached = r.get("time_to_paper_dqn_5m") or r.get("time_to_better_peer")
        rows.append([r.row["contender"], number(r.late_mean()), number(r.get("best_eval", r.best_eval())),
                     number(r.get("return_at_budget", r.get("return_mean_10_at_budget"))),
                     number(r.get("frames_at_budget")), number(r.get("frames_per_s")),
                     minutes(reached["wall_s"]) if reached else "never", machine([r.sitting])])
    days = {(r.sitting.day, r.sitting.speed) for r in results}
    target = "the paper DQN's 5M-frame score" if "minatar" in file else "the better peer's final score"
    text = table(["Contender", "Greedy return, last tenth", "Best greedy", "Training return", "Frames", "Frames/s", f"Time to {target}",
                  "Sitting"], rows)
    if len(days) > 1:
        text += (f"\nThese rows come from {len(days)} sittings; rows of two sittings compare only as far "
                 "as their speed indices do (a sitting before the index has none).\n")
    figure = Path(os.path.relpath(FIGURES / f"{Path(file).stem}.png", page.parent))
    return text + f"\n![Greedy return against wall time, every contender of {file}]({figure.as_posix()})\n"


def curves(file: str) -> Path:
    """The race's figure: each contender's greedy evaluations against wall-clock minutes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    for sitting in read(RESULTS / file):
        for contender in sitting.contenders():
            points = [(r["wall_s"] / 60, r["eval_mean"]) for r in sitting.of(contender)
                      if not r.get("summary") and r.get("eval_mean") is not None and r.get("wall_s") is not None]
            if points:
                label = f"{contender} ({machine([sitting])})"
                ax.plot(*zip(*points), label=label, linewidth=1.2)
    ax.set(xlabel="wall-clock minutes", ylabel="greedy return", title=file)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    FIGURES.mkdir(parents=True, exist_ok=True)
    out = FIGURES / f"{Path(file).stem}.png"
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})  # no version stamp: the PNG changes only with the data
    plt.close(fig)
    return out


KEY_VALUES = re.compile(r"^(actors|max_frames|(\w+\.)?lr|\w+\.batch_size|\w+\.n_step|actor\.envs_per_actor|"
                        r"\w+\.optimizer|algo)$")


def presets(arch: str) -> str:
    """An architecture's presets: where the values come from (the description's first clause; `distrl
    presets` prints it whole) and the values a reader compares first."""
    from distrl.config.presets import PRESETS

    def values(overrides: dict) -> str:
        return ", ".join(f"{k}={v}" for k, v in overrides.items() if KEY_VALUES.match(k)) or "-"

    return table(["Preset", "Source", "Main values"],
                 [[f"`{name}`", re.split(r"[:;(]", source, maxsplit=1)[0].strip(), values(overrides)]
                  for name, (a, source, overrides) in PRESETS.items() if a == arch])


def without_run_dir(command: str) -> str:
    words = shlex.split(command)
    if "--run-dir" in words:
        i = words.index("--run-dir")
        del words[i:i + 2]
    return shlex.join(words)


def reruns(files: str) -> str:
    """Documented commands run again as written (bench/command.py) beside the index row they stand for:
    the same seed's result, each with its sitting."""
    rows = []
    for file in files.split(","):
        sitting = read(RESULTS / file)[-1]
        mine = next(r for r in sitting.rows if r.get("summary"))
        command, seed = without_run_dir(sitting.header["command"]), sitting.header["seed"]
        then = "-"
        for h in HEADLINES:
            if h.command.replace("SEED", str(seed)) == command:
                match = [r for f in h.files if (r := summary(f, h.contender)) and
                         (r.sitting.header.get("seed") or r.get("seed")) == seed]
                if match:
                    then = (f"{number(match[0].late_mean())} at {number(match[0].get('frames_at_budget'))} frames "
                            f"({machine([match[0].sitting])})")
        rows.append([f"`{command}`", machine([sitting]), minutes(mine["wall_s"]), number(mine["frames_at_budget"]),
                     number(mine["rates"].get("learner_updates_per_s")),
                     number(Result(mine, sitting, file).late_mean()), number(mine["final_eval"]), then])
    return table(["Command", "Sitting", "Wall time", "Frames", "Updates/s", "Greedy return, last tenth",
                  "Final greedy", "The index's row"],
                 rows)


# The MinAtar matrix (issue 58): every system on every game, 15 minutes on 2 cores. A system's row is its
# contender in bench.minatar's race files (a system may have had other names: list them after its own).
MATRIX_GAMES = ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")
MATRIX_SYSTEMS = {"apex": ("distrl-apex",), "gorila": ("distrl-gorila",), "a3c": ("distrl-a3c",),
                  "ba3c": ("distrl-ba3c",), "r2d2": ("distrl-r2d2",), "dqn": ("distrl-dqn",)}


def cell(game: str, system: str, seed: int = 1) -> Result | None:
    file = f"minatar-{game}-seed{seed}.jsonl"
    return next((r for n in MATRIX_SYSTEMS[system] if (r := summary(file, n))), None)


def curve(result: Result) -> list[dict]:
    return [x for x in result.sitting.of(result.row["contender"]) if not x.get("summary")]


def reached(result: Result, key: str = "eval_mean") -> dict | None:
    """When the run first reached the MinAtar paper DQN's 5M-frame score (greedy, or training return)."""
    from bench.minatar import PAPER_DQN_5M, time_to
    name = "eval_time_to_paper_dqn_5m" if key == "eval_mean" else "time_to_paper_dqn_5m"
    if name in result.row:
        return result.get(name)
    return time_to(curve(result), PAPER_DQN_5M[result.file.split("-")[1]], key)  # rows made before summaries had it


def rate(result: Result) -> float | None:
    """Updates/s from the curve's last row, for summaries written before they had it."""
    last = next((x for x in reversed(curve(result)) if x.get("updates") is not None and x.get("wall_s")), None)
    return last["updates"] / last["wall_s"] if last else None


def marks(result: Result, key: str) -> str:
    """The value at 5, 10 and 15 minutes: the summary's marks, or taken from the curve for older rows."""
    from bench.minatar import MARKS, at
    prefix = "eval" if key == "eval_mean" else "return"
    values = [result.get(f"{prefix}_{m}", at(curve(result), key, s)) for m, s in MARKS.items()]
    return " / ".join(number(v) for v in values)


def matrix() -> str:
    """Each system's greedy return on each MinAtar game, seed 1 (the mean over the budget's last tenth), and
    the minute its greedy evaluation first reached the MinAtar paper DQN's 5M-frame score, or ✗."""
    from bench.minatar import PAPER_DQN_5M
    rows, sittings = [], []
    for game in MATRIX_GAMES:
        cells = []
        for system in MATRIX_SYSTEMS:
            if (found := cell(game, system)) is None:
                cells.append("not run")
                continue
            sittings.append(found.sitting)
            when = reached(found)
            cells.append(f"{number(found.late_mean())} ({minutes(when['wall_s']) if when else '✗'})")
        rows.append([f"{game} ({number(PAPER_DQN_5M[game], 0)})", *cells])
    text = table(["Game (paper DQN at 5M frames)", *(ARCH_NAMES[a] for a in MATRIX_SYSTEMS)], rows)
    return text + f"\nMade in {span(sittings)}.\n"


def matrix_cells() -> str:
    """Every seed-1 cell of the matrix in full: the training return (mean of the last 100 episodes) and the
    greedy return at 5, 10 and 15 minutes, when each reached the paper DQN's score, how close the greedy
    return comes to PPO's 10M-step score where it passed (the next goal), the rates, the sitting."""
    from bench.minatar import PPO_GYMNAX_10M
    rows = []
    for game in MATRIX_GAMES:
        for system in MATRIX_SYSTEMS:
            if (found := cell(game, system)) is None:
                rows.append([game, ARCH_NAMES[system], "not run", *["-"] * 7])
                continue
            passed = [minutes(w["wall_s"]) if (w := reached(found, k)) else "never" for k in ("return_mean_100", "eval_mean")]
            late = found.late_mean()
            ppo = f"{late / PPO_GYMNAX_10M[game]:.0%}" if game in PPO_GYMNAX_10M and late and reached(found) else "-"
            rows.append([game, ARCH_NAMES[system], marks(found, "return_mean_100"), marks(found, "eval_mean"),
                         *passed, ppo, number(found.get("frames_per_s")),
                         number(found.get("updates_per_s", rate(found))), machine([found.sitting])])
    return table(["Game", "System", "Training return at 5 / 10 / 15 min", "Greedy at 5 / 10 / 15 min",
                  "Training passed the paper DQN", "Greedy passed the paper DQN", "Greedy, of PPO's 10M-step score",
                  "Frames/s", "Updates/s", "Sitting"], rows)


FRAME_MARKS = (100_000, 500_000, 1_000_000, 1_500_000, 3_000_000)


def matrix_frames() -> str:
    """The seed-1 cells' training return at equal frames: which systems learn more per frame, and which
    are ahead at 15 minutes only because they act faster."""
    from bench.minatar import at
    rows = []
    for game in MATRIX_GAMES:
        for system in MATRIX_SYSTEMS:
            if (found := cell(game, system)) is not None:
                rows.append([game, ARCH_NAMES[system],
                             *(number(at(curve(found), "return_mean_100", f, by="frames")) for f in FRAME_MARKS),
                             number(curve(found)[-1]["frames"])])
    return table(["Game", "System", *(f"At {f / 1e6:g}M frames" for f in FRAME_MARKS), "Frames in the run"], rows)


def matrix_seeds() -> str:
    """Ape-X's and BA3C's greedy return (the budget's last tenth) for each seed on each game, their mean
    and spread, and how many seeds' greedy evaluations reached the paper DQN's score."""
    rows = []
    for game in MATRIX_GAMES:
        cells = []
        for system in SEEDED:
            found = {s: cell(game, system, s) for s in MATRIX_SEEDS}
            scores = [x for r in found.values() if r is not None and (x := r.late_mean()) is not None]
            each = " / ".join(number(r.late_mean()) if r is not None else "not run" for r in found.values())
            spread = f" ± {number(statistics.stdev(scores))}" if len(scores) > 1 else ""
            ran = [r for r in found.values() if r is not None]
            cells += [each, f"{number(statistics.mean(scores)) if scores else '-'}{spread}",
                      f"{sum(1 for r in ran if reached(r))} of {len(ran)}"]
        rows.append([game, *cells])
    head = [f"{ARCH_NAMES[a]} {h}" for a in SEEDED for h in ("seeds " + " / ".join(map(str, MATRIX_SEEDS)),
                                                               "mean ± std", "passed")]
    return table(["Game", *head], rows)


ATARI_NAMES = {**ARCH_NAMES, "ppo": "PPO (SB3, zoo values; the peer)"}
ATARI_MARKS = (-10.0, 0.0, 19.0)


def atari(game: str = "pong") -> str:
    """Every Atari run of one game (bench.pong's files and the PPO peer's, bench/peers/ppo_pong.py): the
    minute its greedy evaluation first reached -10, 0 and 19, its best, its rates and its sitting; 2-core
    runs first; on each machine the soonest to 19 first, then to 0, then to -10, so that runs which never
    reached a mark still rank by how far they got, and those that reached none by their best."""
    rows = []
    for path in RESULTS.glob(f"atari-{game}-*.jsonl"):
        for sitting in read(path):
            summaries = [r for r in sitting.rows if r.get("kind") == "summary"]
            if not summaries:
                continue
            head, last = sitting.header, summaries[-1]
            evals = [r for r in sitting.rows if r.get("kind") == "eval"]
            curve = [r for r in sitting.rows if r.get("kind") == "curve"]
            crossed = [next((e for e in evals if e["eval_return"] >= m), None) for m in ATARI_MARKS]
            best = max((e["eval_return"] for e in evals), default=None)
            label = head["machine"].get("label", "?")
            soonest = [e["wall_s"] if e is not None else float("inf") for e in reversed(crossed)]
            key = (not label.startswith("cpu"), label, *soonest, -best if best is not None else float("inf"))
            where = label if label.startswith("cpu") else f"{label}, {head.get('cores')} cores"
            rows.append((key, [ATARI_NAMES.get(head.get("arch", "apex"), head.get("arch")), f"{where} ({path.name})",
                               run_length(last["wall_s"], head), number(last["frames"]), number(last["env_frames_per_s"]),
                               number(last["learner_updates_per_s"]), *(crossing(e, curve) for e in crossed),
                               number(best), machine([sitting])]))
    rows.sort(key=lambda r: r[0])
    return table(["System", "Machine (file)", "Run", "Frames", "Frames/s", "Updates/s",
                  *(f"Greedy first ≥ {m:g} (its parameters')" for m in ATARI_MARKS), "Best greedy", "Sitting"],
                 [r for _, r in rows])


def run_length(wall_s: float, head: dict) -> str:
    """A run's minutes, and in how many parts where it was resumed: each restart lies inside them."""
    parts = 1 + len(head.get("resumed") or [])
    return minutes(wall_s) + (f" in {parts} parts" if parts > 1 else "")


def crossing(evaluation: dict | None, curve: list[dict]) -> str:
    """The minute an evaluation reported a crossing, and the minute of the parameters it scored."""
    if evaluation is None:
        return "never"
    made = evaluation.get("params_wall_s")  # a result's own, where it has one (the stop's checkpoint is past the curve)
    if made is None and curve and "updates" in evaluation:
        made = params_wall_s(curve, evaluation["updates"])
    return minutes(evaluation["wall_s"]) + (f" ({made / 60:.1f})" if made is not None else "")


BLOCKS: dict[str, Callable[..., str]] = {"atari": atari, "index": index, "race": race, "presets": presets, "reruns": reruns,
                                         "matrix": matrix,
                                         "matrix-cells": matrix_cells, "matrix-frames": matrix_frames,
                                         "matrix-seeds": matrix_seeds}


def render(spec: str, page: Path) -> str:
    name, *args = spec.split()
    if name not in BLOCKS:
        raise SystemExit(f"{page}: report block {name!r}: unknown; blocks are {', '.join(BLOCKS)}")
    options = dict(a.split("=", 1) for a in args)
    return BLOCKS[name](**options, **({"page": page} if name == "race" else {}))


# ---- pages ----------------------------------------------------------------------------------------
def pages(root: Path = ROOT) -> list[Path]:
    out = []
    for name in PAGES:
        path = root / name
        out += sorted(path.rglob("*.md")) if path.is_dir() else [path] if path.exists() else []
    return out


def rendered(text: str, page: Path) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("spec"), page) + m.group(4), text)


def stale_blocks(root: Path = ROOT) -> list[str]:
    """Each block whose text differs from what the result files give, as "page: spec"."""
    stale = []
    for page in pages(root):
        for m in BLOCK.finditer(page.read_text()):
            if m.group("body") != render(m.group("spec"), page):
                stale.append(f"{page.relative_to(root)}: report: {m.group('spec')}")
    return stale


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 where a page's block differs; write nothing")
    args = p.parse_args(argv)
    if args.check:
        stale = stale_blocks()
        for s in stale:
            print(f"stale: {s} (run `python -m bench.report`)")
        return 1 if stale else 0
    drawn = set()
    for page in pages():
        text = page.read_text()
        for m in BLOCK.finditer(text):
            if m.group("spec").split()[0] == "race" and (file := m.group("spec").split("file=")[1].split()[0]) not in drawn:
                drawn.add(file)
                print(f"drew {curves(file).relative_to(ROOT)}")
        if (new := rendered(text, page)) != text:
            page.write_text(new)
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
