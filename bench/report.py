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
system on every MinAtar game). `tests/test_report.py` runs the check in the quick tier.
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
from bench.runs import RESULTS, ROOT

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


def _minatar(arch: str, contender: str, game: str) -> Headline:
    return Headline(arch, f"MinAtar/{game}-v1", (f"minatar-{game}-seed1.jsonl",), contender,
                    f"distrl train {arch} --env MinAtar/{game}-v1 --runtime ray --actors 2 --seed SEED --max-time 15m")


def _mujoco(env: str, seeds: tuple[int, ...]) -> Headline:
    return Headline("apex-dpg", env, tuple(f"continuous-{env}-seed{s}.jsonl" for s in seeds),
                    "distrl-apex-dpg-twin-critics-bf16",
                    f"distrl train apex-dpg --env {env} --runtime ray --actors 2 --seed SEED --max-time 20m "
                    "--max-frames 10000000")


HEADLINES: tuple[Headline, ...] = (
    *(_minatar(a, c, g) for g in ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")
      for a, c in (("apex", "distrl-apex"), ("gorila", "distrl-gorila"), ("a3c", "distrl-a3c"),
                   ("ba3c", "distrl-ba3c"))),
    _minatar("r2d2", "distrl-r2d2", "Breakout"),
    _minatar("r2d2", "distrl-r2d2", "Asterix"),
    _minatar("r2d2", "distrl-r2d2-bf16", "SpaceInvaders"),  # the r2d2-minatar preset's values since 2026-11-28
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
    """The contender's last summary row in `file` (a race file keeps one per contender), None if none."""
    found = None
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
    """Where rows were made: each sitting's day and speed index ("not measured" before the index)."""
    parts = dict.fromkeys(f"{s.day}, speed {s.speed:.2f}" if s.speed is not None else f"{s.day}, speed not measured"
                          for s in sittings)
    return "; ".join(parts)


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


# The MinAtar matrix (issue 58): every system on every game, seed 1, 15 minutes on 2 cores. A system's
# row is its contender in bench.minatar's race files; R2D2's rows made as distrl-r2d2-bf16 are the
# r2d2-minatar preset's own values since bf16 became its default.
MATRIX_GAMES = ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")
MATRIX_SYSTEMS = {"apex": ("distrl-apex",), "gorila": ("distrl-gorila",), "a3c": ("distrl-a3c",),
                  "ba3c": ("distrl-ba3c",), "r2d2": ("distrl-r2d2", "distrl-r2d2-bf16"), "dqn": ("distrl-dqn",)}


def matrix() -> str:
    """Each system's greedy return on each MinAtar game (the mean over the budget's last tenth) and the
    minute its greedy evaluation first reached the MinAtar paper DQN's 5M-frame score, or ✗."""
    from bench.minatar import PAPER_DQN_5M, time_to
    rows, sittings = [], []
    for game in MATRIX_GAMES:
        file = f"minatar-{game}-seed1.jsonl"
        cells = []
        for names in MATRIX_SYSTEMS.values():
            found = next((r for n in names if (RESULTS / file).exists() and (r := summary(file, n))), None)
            if found is None:
                cells.append("not run")
                continue
            sittings.append(found.sitting)
            reached = found.get("eval_time_to_paper_dqn_5m") or time_to(  # rows made before the summaries had it
                [x for x in found.sitting.of(found.row["contender"]) if not x.get("summary")], PAPER_DQN_5M[game],
                "eval_mean")
            cells.append(f"{number(found.late_mean())} ({minutes(reached['wall_s']) if reached else '✗'})")
        rows.append([f"{game} ({number(PAPER_DQN_5M[game], 0)})", *cells])
    text = table(["Game (paper DQN at 5M frames)", *(ARCH_NAMES[a] for a in MATRIX_SYSTEMS)], rows)
    return text + f"\nSittings: {machine(sittings)}.\n"


BLOCKS: dict[str, Callable[..., str]] = {"index": index, "race": race, "presets": presets, "reruns": reruns,
                                         "matrix": matrix}


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
