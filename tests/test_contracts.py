"""The role contracts (distrl/contracts.py): every part a role's class uses from the parts it is built
from is declared on the Protocol its constructor names, every role's parts have what its class declares,
and no placement flag reaches the architectures or the components (a role asks its transport instead)."""

import ast
import inspect
import pickle
import textwrap
import typing
from pathlib import Path

import pytest

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.architectures.base import Topology
from distrl.components import chief, workers
from distrl.contracts import Builder
from distrl.errors import ConfigError
from tests.cases import cases, names

ROOT = Path(__file__).resolve().parents[1] / "src" / "distrl"
ROLE_MODULES = (workers, chief)


def protocol_members(proto: type) -> set[str]:
    names: set[str] = set()
    for klass in proto.__mro__:
        if klass in (object, typing.Protocol, typing.Generic):
            continue
        names |= {k for k in vars(klass) if not k.startswith("_")} | set(getattr(klass, "__annotations__", {}))
    return names


def parts_protocol(cls: type) -> type | None:
    """The Protocol a role's constructor takes its parts as (None: the class takes none)."""
    if "parts" not in inspect.signature(cls.__init__).parameters:
        return None
    return typing.get_type_hints(cls.__init__)["parts"]


def parts_uses(cls: type) -> set[str]:
    """Attributes read off the parts in the class's source: `parts.x`, and `self.parts.x` where it keeps them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id == "parts":
                used.add(node.attr)
            elif isinstance(base, ast.Attribute) and base.attr == "parts" and isinstance(base.value, ast.Name) \
                    and base.value.id == "self":
                used.add(node.attr)
    return used


def role_classes() -> list[type]:
    return [cls for m in ROLE_MODULES for _, cls in inspect.getmembers(m, inspect.isclass)
            if cls.__module__ == m.__name__ and parts_protocol(cls) is not None]


def test_every_part_a_role_uses_is_declared_on_its_protocol():
    classes = role_classes()
    assert {c.__name__ for c in classes} >= {"ActorWorker", "LearnerWorker", "ReplayShard", "ShardWorker",
                                             "BundleWorker", "ActorLearnerWorker", "GradientWorker",
                                             "EvaluatorWorker", "Chief", "WaitingChief"}
    undeclared = {c.__name__: sorted(parts_uses(c) - protocol_members(parts_protocol(c))) for c in classes}
    assert not any(undeclared.values()), undeclared


def test_the_check_sees_an_undeclared_part():
    class Probe:
        def __init__(self, parts: workers.EvaluatorParts):
            self.parts = parts
            parts.make_evaluator()
            self.parts.make_learner("cpu")

    assert parts_uses(Probe) - protocol_members(parts_protocol(Probe)) == {"make_learner"}


CASES = [(a, env, overrides) for a in names() for env, overrides in cases(a).contracts]


@pytest.mark.parametrize("architecture,env,overrides", CASES, ids=lambda x: str(x) if isinstance(x, str) else "")
def test_every_roles_parts_have_what_its_class_declares(architecture, env, overrides):
    topology = make_architecture(C.build_config(architecture, env, overrides=overrides)).topology()
    for role in topology.roles:
        classes = [role.cls] + ([role.apart] if role.apart else [])
        for cls in classes:
            missing = sorted(m for m in protocol_members(parts_protocol(cls)) if not hasattr(role.parts, m))
            assert not missing, f"{architecture}'s {role.name} ({cls.__name__}) needs {missing}"


@pytest.mark.parametrize("architecture,env,overrides", CASES, ids=lambda x: str(x) if isinstance(x, str) else "")
def test_every_builder_has_what_the_builder_protocol_declares(architecture, env, overrides):
    builder = make_architecture(C.build_config(architecture, env, overrides=overrides))
    missing = sorted(m for m in protocol_members(Builder) if not hasattr(builder, m))
    assert not missing, f"{architecture}'s builder lacks {missing}"
    topology = builder.topology()
    assert isinstance(topology, Topology) and all(role.parts is not None for role in topology.roles)


@pytest.mark.parametrize("architecture", names())
def test_every_roles_parts_on_atari_stay_out_of_rays_object_store(architecture):
    """Ray puts an actor's constructor arguments over 100 KB in its object store, and cannot restart the actor
    once they are gone (ray-project/ray#53727): Atari's observation space alone pickles to 114 KB, so no part
    carries it unless a user's network is built from it."""
    try:
        builder = make_architecture(C.build_config(architecture, "ALE/Pong-v5"))
    except ConfigError:
        pytest.skip(f"{architecture} takes no discrete actions")
    sizes = {role.name: len(pickle.dumps(role.parts)) for role in builder.topology().roles}
    assert max(sizes.values()) < 20_000, sizes


def test_no_placement_flag_or_placement_config_reaches_the_architectures_or_the_components():
    found = []
    for folder in ("architectures", "components"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) \
                    else node.arg if isinstance(node, ast.arg) else None
                if name == "remote":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                # a placement's section of the config (cfg.ray, self.cfg.inline): the placement reads it (runtime/)
                if isinstance(node, ast.Attribute) and node.attr in ("ray", "inline") \
                        and ast.unparse(node.value).split(".")[-1] == "cfg":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    assert not found, found


def test_the_pacing_grants_whole_batches_of_the_ratio_and_holds_actors_in_its_band():
    from distrl.architectures.base import Pacing
    from distrl.replay import SampleToInsertRatio
    pacing = Pacing(3.0, 100, batch=64).banded(10)  # a band of 10 steps: 30 samples
    assert pacing.limiter == SampleToInsertRatio(3.0, 100, error_buffer=30.0)
    # 3 samples per insert, batches of 64: 8 inserts allow 24 samples (no batch), 24 allow 72 (one)
    assert pacing.batches({"actors/steps": 8}) == 0
    assert pacing.batches({"actors/steps": 24}) == 1
    assert pacing.batches({"actors/steps": 24, "learner/samples": 64}) == 0  # 72 - 64: the 8 carry on
    assert pacing.batches({"actors/steps": 48, "learner/samples": 64}) == 1  # 144 - 64 = 80
    assert pacing.batches({"actors/steps": 48, "learner/skipped_updates": 2}) == 0  # skipped batches count as taken
    # actors: free up to min_size and while the learner waits; then (inserts) * 3 - samples <= 300 + 30
    assert pacing.may_insert({"actors/steps": 100}, {})
    assert not pacing.may_insert({"actors/steps": 200}, {})  # 600 - 0 > 330
    assert pacing.may_insert({"actors/steps": 200}, {"learner": {"waiting_for_replay": 1}})
    assert pacing.may_insert({"actors/steps": 200, "learner/samples": 270}, {})  # 600 - 270 = 330
    assert not pacing.may_insert({"actors/steps": 200, "learner/samples": 269}, {})


def test_a_pacing_counted_from_a_resume_paces_only_what_came_after():
    """A run that sampled 8 per insert resumes at 1: counted from the start, 1,000 inserts and 8,000
    samples would hold the learner for 7,000 more inserts; counted from the resume it is a fresh start."""
    from distrl.architectures.base import Pacing
    old = {"actors/steps": 1000, "learner/samples": 7936, "learner/skipped_updates": 1}  # 8,000 samples
    pacing = Pacing(1.0, 100, batch=64).banded(10)
    assert pacing.batches({**old, "actors/steps": 8000}) == 0  # from the run's start: 8,000 - 8,000
    resumed = pacing.from_now(old)
    assert resumed.start == (1000, 8000)
    assert resumed.batches({**old, "actors/steps": 1127}) == 1  # 127 new inserts: one batch of 64
    assert resumed.batches({**old, "actors/steps": 1127, "learner/samples": 8000}) == 0  # and it was taken
    assert resumed.may_insert({**old, "actors/steps": 1100}, {})  # free up to min_size again
    assert not resumed.may_insert({**old, "actors/steps": 1200}, {})  # 200 - 0 > 100 + 10
    assert resumed.from_now({**old, "actors/steps": 1200}).start == (1200, 8000)  # a second resume adds on


def test_every_architecture_has_a_case_in_the_inline_digests():
    """bench/inline_digests.py shows a refactor leaves inline runs bit-identical: for every registered one."""
    from bench.inline_digests import uncovered
    assert uncovered() == []
