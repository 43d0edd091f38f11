"""What the tests over the registry run of each built-in architecture. Every package of
distrl/architectures has its module here, tests/cases/<package>.py, holding its `CASES`: the
signpost run of tests/test_learning_smoke.py, the checkpoint of tests/test_checkpoint.py, the configs
tests/test_contracts.py checks, its chaos run (tests/chaos/), its runs on the test cluster
(tests/test_cluster.py) and on MinAtar (tests/test_minatar.py), and its inline digests
(bench/inline_digests.py). The tests take the architectures from the registry, so none keeps a list of
them: a new architecture is its package and its module here, and one registered without a module fails
with the file to write."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import pytest

from distrl.architectures import PACKAGES

DISCRETE, CONTINUOUS = "tests.tiny_env:Signpost-v0", "tests.tiny_env:SteeredSignpost-v0"


@dataclass(frozen=True)
class Chaos:
    """A Ray run while runtime/chaos.py kills its processes: it must end at `threshold` (the undisturbed
    acceptance run's) less `margin` (what the kills may cost), with a kill every `every_s` seconds."""
    env: str
    overrides: dict
    threshold: float
    margin: float
    every_s: float
    # judged on the best greedy evaluation after the stateful part's restore (periodic ones), not only the
    # last: for systems whose undisturbed runs dip late, so the last one does not measure the kills
    best_evaluation: bool = False
    # left out of CI for its budget (`make test-all`, `make test-chaos`): 7 minutes or more on 2 cores, the
    # roles of a case that CI runs (DQN's and R2D2's are Ape-X's), or kills a CI case makes without the
    # learning threshold (BA3C's: test_ray_ba3c.py's killed worker and shard)
    long: bool = False


@dataclass(frozen=True)
class Cases:
    smoke: tuple[str, dict]  # the signpost corridor (tests/tiny_env.py) and overrides on the small preset
    checkpoint: tuple[str, dict, dict[str, int]]  # env, overrides, the saved roles' instance counts
    chaos: Chaos
    contracts: tuple[tuple[str, dict], ...] = (("CartPole-v1", {}),)  # configs whose roles' parts are checked
    saves_rng: bool = False  # its checkpoint holds the torch RNG (its learner draws from it)
    # bench/inline_digests.py: case -> (env, overrides), short inline runs whose digests a refactor keeps
    digests: dict[str, tuple[str, dict]] = field(default_factory=dict)
    actors: int = 2  # the workers of its small presets (the MinAtar ones: 2 for 2 cores; DQN its paper's one)
    # tests/test_cluster.py: (env, overrides) of a short Ray run with every role on the worker hosts
    cluster: tuple[str, dict] = ("CartPole-v1", {"actors": 2, "max_frames": 3000})
    # tests/test_minatar.py: overrides of its MinAtar preset for a 3,000-frame inline run each (none: not discrete)
    minatar: tuple[dict, ...] = ({},)


def names() -> list[str]:
    """Every built-in architecture the registry found."""
    return sorted(PACKAGES)


def cases(name: str) -> Cases:
    try:
        module = importlib.import_module(f"tests.cases.{PACKAGES[name]}")
    except ModuleNotFoundError:
        pytest.fail(f"architecture {name!r} has no test cases: write tests/cases/{PACKAGES[name]}.py with its CASES "
                    "(see tests/cases/dqn.py)")
    return module.CASES
