"""What an architecture gives the driver (runtime/driver.py): its Topology, as data (its roles, each with
the parts it is built from, the replay ratio, what the driver saves and counts), and the few steps of its
protocol that are its paper's own (Hooks). Nothing here says where a role runs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from distrl.architectures.common import Checkpoints
from distrl.components.workers import EvaluatorWorker
from distrl.replay import RateLimiter, SampleToInsertRatio


@dataclass(frozen=True)
class Work:
    """What a called role's `run(n, ...)` counts (`unit`: steps, updates, rounds, gradients), and how many
    of them one call asks where the roles take turns in one process: `round`, one round of the paper's
    processes serialised (None: the inline placement's own, inline.actor_steps). Where each role has a
    process of its own the placement says how much a call asks (runtime/calls.py). A paced learner's calls
    are cut to what the Topology's Pacing allows."""

    unit: str
    round: float | None = None


@dataclass(frozen=True)
class Role:
    """`count` instances of `cls`, each built as cls(parts, index, links, transport): `parts` is what the
    role builds itself from (a Protocol of distrl.contracts; on Ray it is all the role's process receives),
    and links maps every name in `links` to that role's instances. A role with `work` is called: the driver keeps each
    instance busy with run(n) -> Report; any other role serves calls. The rest are hints a placement may
    use: `gpu` which of its GPU shares the role can take ("learner", "actor"; "": none; on Ray,
    ray.learner_gpus and ray.actor_gpus), `threads` for a role that answers calls while it runs one,
    `torch_threads` for the torch of a role in a process of its own (0: one per core), `apart` the class a
    placement builds instead where the role's callers run in processes of their own (BA3C's chief: a push
    waits there for its round). `fault` names the summary's count of its restarts where the default name
    does not fit; a served role is counted only where it has one."""

    name: str
    count: int
    cls: type
    links: tuple[str, ...] = ()
    work: Work | None = None
    gpu: str = ""
    threads: int = 1
    torch_threads: int = 1
    apart: type | None = None
    fault: str = ""
    parts: Any = None

    @property
    def called(self) -> bool:
        return self.work is not None

    @property
    def fault_key(self) -> str:
        """The summary's name for this role's restarts: actor_restarts, learner_restarts, ..."""
        return self.fault or f"{self.name.removesuffix('s')}_restarts"


@dataclass(frozen=True)
class Pacing:
    """One replay ratio on every placement: the driver asks it before each call of the inserting and the
    sampling role. Inserts are the inserter's agent steps (each makes a transition), samples the
    sampler's, with the batches it had to skip while its replay could not sample (so a learner that
    waited for the replay start does not catch up in one burst), both in replay items. The limiter
    (Reverb's SampleToInsertRatio, set by `banded` with the placement's band) holds the inserter while
    inserts outrun samples by more than its band; the sampler's call takes whole batches up to
    samples_per_insert per insert so far, so in one process a round of k inserts allows exactly
    samples_per_insert * k samples, fractions carried to the next round."""

    samples_per_insert: float
    min_size: int
    batch: int
    inserter: str = "actors"
    sampler: str = "learner"
    per_step: float = 1.0  # replay items an inserter's step makes (R2D2: one sequence every `period` steps)
    envs: int = 1  # envs an inserter steps at each step of its call
    limiter: RateLimiter | None = None
    start: tuple[float, float] = (0.0, 0.0)  # (inserts, samples) counted before this replay began

    def banded(self, steps: float) -> Pacing:
        """This pacing with its limiter, whose band is what `steps` steps of the inserter's every env make."""
        spi, band = self.samples_per_insert, steps * self.envs * self.per_step
        return replace(self, limiter=SampleToInsertRatio(spi, self.min_size, error_buffer=spi * band))

    def from_now(self, totals: dict[str, float]) -> Pacing:
        """This pacing counted from `totals` on. A resumed run whose replay refills from empty paces that
        replay's inserts and samples (as Reverb's limiter belongs to its table): counted from the run's
        start, a ratio changed at the resume would hold the learner until the actors had made up the
        whole earlier run's difference."""
        inserts, samples = self.counts(totals)
        return replace(self, start=(self.start[0] + inserts, self.start[1] + samples))

    def counts(self, totals: dict[str, float]) -> tuple[float, float]:
        skipped = totals.get(f"{self.sampler}/skipped_updates", 0) * self.batch
        return (totals.get(f"{self.inserter}/steps", 0) * self.per_step - self.start[0],
                totals.get(f"{self.sampler}/samples", 0) + skipped - self.start[1])

    def band(self) -> RateLimiter:
        if self.limiter is None:
            raise ValueError("a Pacing is asked only once banded: Pacing.banded(steps)")
        return self.limiter

    def may_insert(self, totals: dict[str, float], state: dict[str, dict[str, float]]) -> bool:
        """Before learning starts, and while a restarted replay refills, nothing waits."""
        inserts, samples = self.counts(totals)
        if inserts <= self.band().min_size_to_sample or state.get(self.sampler, {}).get("waiting_for_replay"):
            return True
        return self.band().can_insert(0, inserts=inserts, samples=samples, size=inserts)

    def batches(self, totals: dict[str, float]) -> int:
        """Whole batches the sampler may take now."""
        inserts, samples = self.counts(totals)
        return max(0, math.floor((inserts * self.band().samples_per_insert - samples) / self.batch + 1e-9))


class Hooks:
    """The steps of the driver's loop that an architecture's paper may make its own; these defaults fit a
    run that needs nothing more (the replay-fed ones). A3C, BA3C and Gorila override some."""

    def counters(self, totals: dict[str, float], served: dict[str, list[dict[str, Any]]],
                 reported: dict[str, dict[int, dict[str, float]]]) -> dict[str, float]:
        """The monitor's counters from the driver's: `totals` (called roles' counters, "role/key"),
        `served` (each served role's latest stats(), one dict per instance) and `reported` (each called
        instance's latest Report.state). By default the served stats summed over instances."""
        c = dict(totals)
        for role, parts in served.items():
            for part in parts:
                for k, v in part.items():
                    c[f"{role}/{k}"] = c.get(f"{role}/{k}", 0) + v
        return c

    def gauges(self, counters: dict[str, float]) -> dict[str, float]:
        """Columns of metrics.csv beside the rates, from the driver's counters."""
        return {}

    def call_args(self, role: str, frames: float) -> tuple[Any, ...]:
        """What a called role's run() takes after its steps, given the run's frames so far."""
        return ()

    def may_call(self, role: str, totals: dict[str, float], state: dict[str, dict[str, float]]) -> bool:
        """Whether the driver may start the next call of `role` now, besides the pacing's say."""
        return True

    @contextmanager
    def held_by_driver(self) -> Iterator[None]:
        """What the driver's own process holds while the run goes, from before the roles start to after
        they stop (A3C's shared-memory store); nothing by default."""
        yield

    def parts_held_by_driver(self) -> dict[str, list[Any]]:
        """Stateful parts that the driver's own process holds (held_by_driver()) in place of a role's
        instances, by role name; the driver saves and restores them as it does the role's (A3C's shared-memory
        store)."""
        return {}

    def release_waiters(self, roles: dict[str, list[Any]], transport: Any) -> None:
        """Called once max_frames is reached, before the calls still out are collected (BA3C's chief lets
        go of workers waiting for a round no more pushes will close)."""

    def policy(self, roles: dict[str, list[Any]], transport: Any) -> tuple[Any, int]:
        """(parameters to evaluate, as the transport passes them; their version): the learner's by default."""
        payload, version = transport.gather([transport.call(roles["learner"][0], "params")])[0]
        return payload[0], version


@dataclass(frozen=True)
class Evaluation:
    """The evaluator's part (contracts.EvaluatorParts): how to build the run's evaluator."""

    make_evaluator: Callable[..., Any]


def evaluator_role(cfg: Any, make_evaluator: Callable[..., Any]) -> Role:
    """The run's evaluator, where it has evaluation episodes: served, its part how to build it."""
    return Role("evaluator", 1 if cfg.eval_episodes else 0, EvaluatorWorker, parts=Evaluation(make_evaluator))


@dataclass(frozen=True)
class Topology:
    """A run as data, what the driver needs of an architecture: its roles in the order the driver calls
    them in a round (each started once the roles it links to exist), the replay ratio held on every
    placement, the role whose snapshots make the checkpoint and the counter checkpoints and evaluations
    are scheduled on, the served roles whose stats() the driver sums into its counters, the gauges that
    also go into the summary's faults, a training-return column the monitor keeps beside the mean, how
    checkpoints are written and read, and the hooks."""

    roles: tuple[Role, ...]
    checkpoints: Checkpoints
    pacing: Pacing | None = None
    saved_role: str = "learner"
    progress_key: str = "learner/updates"
    stats_roles: tuple[str, ...] = ()
    fault_gauges: tuple[str, ...] = ()
    watched_return: str | None = None
    hooks: Hooks = field(default_factory=Hooks)
