"""Chaos runs: every architecture's acceptance run on Ray while runtime/chaos.py SIGKILLs a random
actor every few seconds, the replay once and the learner (or a parameter shard) once.

Each must finish, count its frames and restarts, restart the learner/shard with exactly the state of
the newest checkpoint present when it died, and still pass its undisturbed threshold less a stated
margin. The margin is for the work the kills cost (at most `checkpoint_every` updates redone, an
emptied replay refilled) and for Ray's run-to-run variance; docs/notes/benchmarks.md, "Chaos runs", gives the measured runs."""

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("ray")

from distrl import config as C  # noqa: E402
from distrl.architectures import make_architecture  # noqa: E402
from distrl.runtime.chaos import ACTOR_ROLES  # noqa: E402
from distrl.training import train  # noqa: E402
from tests.cases import cases, names  # noqa: E402

# Each architecture's case (env, overrides, undisturbed threshold, margin, chaos period) is its
# tests/cases/<package>.py's `chaos`. Margins cover what undisturbed seed-1 Ray runs of the same config
# gave (docs/notes/benchmarks.md, "Chaos runs"); periods give each run 6-12 actor kills. The cases
# marked long (tests/cases/__init__.py's Chaos.long says which and why) run in `make test-all` and
# `make test-chaos`, not in CI: with the longest the suite took 64 min of CI's 90.


def chaos_params() -> list:
    return [pytest.param(a, marks=pytest.mark.long) if cases(a).chaos.long else a for a in names()]


@pytest.mark.learning
@pytest.mark.alone
@pytest.mark.parametrize("architecture", chaos_params())
def test_chaos_run_recovers_exactly_and_still_learns(tmp_path, architecture):
    case = cases(architecture).chaos
    cfg = C.build_config(architecture, case.env, overrides={"runtime": "ray", "actors": 2, "seed": 1,
                                                            "run_dir": str(tmp_path / "run"), **case.overrides})
    roles = {role.name: role for role in make_architecture(cfg).topology().roles if role.count}
    has_replay_server = "replay" in roles  # Gorila's bundles hold their replay: a bundle kill loses it
    actors = next(roles[name] for name in ACTOR_ROLES if name in roles)  # what chaos.py kills
    summary = train(cfg, live=False, chaos=case.every_s)
    chaos = summary["chaos"]
    report = json.dumps({k: summary[k] for k in ("frames", "updates", "wall_s", "eval_return_mean", "faults",
                                                 "chaos")})
    assert json.loads((tmp_path / "run" / "chaos.json").read_text()) == chaos

    # Everything was killed that the harness promises, and the run finished regardless.
    assert chaos["kills"].get("actor", 0) >= 2, report
    assert chaos["kills"].get("replay", 0) == has_replay_server, report
    stateful = "learner" if "learner" in roles else "ps_shard"
    assert chaos["kills"].get(stateful) == 1 and all(e["dead"] for e in chaos["events"]), report
    assert summary["frames"] >= cfg.max_frames, report

    # Restarts are counted: each killed actor that came back reported from a new process.
    assert chaos["kills"]["actor"] - 1 <= summary["faults"][actors.fault_key] <= chaos["kills"]["actor"]
    if stateful == "learner":
        assert summary["faults"]["learner_restarts"] == 1, report
    if has_replay_server:
        assert summary["faults"]["replay_waits"] >= 1, report  # the learner paused for the refill

    # The restarted learner/shard loaded the newest checkpoint at its death, bit for bit.
    (restore,) = chaos["restores"]
    assert restore["exact"] and restore["path"] == restore["expected_path"], report
    assert restore["new_pid"] != restore["old_pid"]
    if stateful == "learner":  # learner checkpoints are named by its update counter
        assert int(Path(restore["path"]).stem.split("-")[1]) == restore["updates"]
    assert summary["updates"] > restore["updates"], report  # and learning went on from there

    returns = [summary["eval_return_mean"]]
    if case.best_evaluation:
        with open(tmp_path / "run" / "evaluations.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) >= 4, report  # periodic evaluations ran all along
        # counted from the restore where updates count the restored part's (learner; BA3C's rounds); not
        # Gorila's, whose evaluations are scheduled on the shards' global updates
        after = int(restore["updates"]) if stateful == "learner" or "chief" in roles else 0
        returns += [float(row["eval_return_mean"]) for row in rows if int(row["updates"]) > after]
    assert max(returns) >= case.threshold - case.margin, f"{returns}: {report}"
