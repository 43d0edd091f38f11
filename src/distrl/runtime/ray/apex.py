"""Ape-X and Ape-X DPG on Ray: replay shards, one learner, N actors and an evaluator, each a Ray actor."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from distrl import config as C
from distrl.architectures.apex import Apex
from distrl.components.monitor import Monitor
from distrl.errors import ConfigError
from distrl.replay import PrioritizedSampler, SampleToInsertRatio
from distrl.replay.table import frame_fields
from distrl.runtime.ray.cluster import RESTART, connect, retry
from distrl.runtime.ray.hosts import ActorHost, EvaluatorHost, LearnerHost, ReplayShard, prioritized_replay
from distrl.runtime.ray.reports import collect_reports, count_restart, poll_eval, saved_on_interrupt, sync_restarts


def learner_resources(cfg: C.ApexConfig) -> tuple[float, str]:
    gpus = cfg.ray.learner_gpus
    if gpus < 0:
        gpus = 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0
    return gpus, "cuda" if gpus > 0 else "cpu"


def run_apex(arch: Apex, run_dir: Path, monitor: Monitor, resume: bool = False,
             hook: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Drive a run: keep every actor busy, count what they report, log, evaluate, stop at max_frames.

    `hook(state)` is called on every driver tick with the live handles (fault-injection tests use it)."""
    cfg = arch.cfg
    started = connect(cfg.address, cfg.actors + cfg.replay.shards + 2)  # + learner, evaluator
    cfg_dict = C.to_dict(cfg)
    try:
        return _drive(arch, cfg, cfg_dict, Path(run_dir), monitor, hook)
    finally:
        if started:
            ray.shutdown()


def actor_placement(node_ip: str) -> dict:
    """Soft node affinity: the actors start on the node at `node_ip`, and Ray restarts them on another
    node once that one is gone (the placement a cluster of CPU actor hosts wants)."""
    if not node_ip:
        return {}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    alive = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    if node_ip not in alive:
        raise ConfigError(f"ray.actor_node={node_ip!r}: no live node of this Ray cluster has that address "
                          f"(its nodes: {', '.join(sorted(alive))}); give one of those, or leave it empty")
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(alive[node_ip], soft=True)}


def _drive(arch: Apex, cfg: C.ApexConfig, cfg_dict: dict, run_dir: Path, monitor: Monitor,
           hook: Callable[[dict], None] | None) -> dict[str, Any]:
    placement = actor_placement(cfg.ray.actor_node)  # before anything starts: a wrong address fails first
    r = cfg.replay
    compress = frame_fields(r.compress, arch.obs_shape)
    per_shard = -(-r.capacity // r.shards)
    shard_cls = ray.remote(ReplayShard).options(num_cpus=1, **RESTART)
    saved = str(run_dir.resolve()) if r.checkpoint else None
    shards = [shard_cls.remote(per_shard, PrioritizedSampler(r.alpha, r.beta), arch.replay_remover(), cfg.seed + i,
                               compress, i, saved) for i in range(r.shards)]
    gpus, device = learner_resources(cfg)
    learner = ray.remote(LearnerHost).options(num_cpus=1, num_gpus=gpus, max_concurrency=4, **RESTART) \
        .remote(cfg_dict, shards, str(run_dir.resolve()), device)
    restored = ray.get(learner.restored.remote())
    base = {k: int(v) for k, v in restored["counters"].items()}
    monitor.add_returns(restored["returns"])
    if arch.watched_return:
        monitor.watch(arch.watched_return)
    actor_cls = ray.remote(ActorHost).options(num_cpus=1, **RESTART, **placement)
    actors = [actor_cls.remote(cfg_dict, i, shards, learner) for i in range(cfg.actors)]
    evaluator = ray.remote(EvaluatorHost).options(num_cpus=1, **RESTART).remote(cfg_dict) \
        if cfg.eval_episodes else None
    replay = prioritized_replay(cfg, shards)

    totals = {"frames": base.get("frames", 0), "episodes": base.get("episodes", 0),
              "param_pulls": base.get("param_pulls", 0), "steps": 0, "transitions_sent": 0}
    faults = {"actor_restarts": 0, "learner_restarts": 0}
    pids: dict[int, int] = {}
    waits = {"base": 0, "last": 0}  # the learner's replay_waits, summed over its incarnations
    training, probe, learner_pid = learner.train.remote(), None, {}
    pending = {actors[i].run.remote(cfg.ray.steps_per_call): i for i in range(cfg.actors)}
    evaluations: list[dict] = []
    eval_ref, next_eval = None, cfg.eval_every
    last_counters: dict[str, float] = {}
    last_log = time.perf_counter()
    state = {"actors": actors, "replay": shards, "learner": learner, "evaluator": evaluator,
             "totals": totals, "faults": faults, "run_dir": run_dir}

    def counters() -> dict[str, float]:
        sync_restarts(faults, "actor_restarts", actors)
        sync_restarts(faults, "learner_restarts", [learner])
        c = {f"actors/{k}": v for k, v in totals.items()}
        try:
            c.update({f"replay/{k}": v for k, v in replay.stats().items()})
            c.update({f"learner/{k}": v for k, v in ray.get(learner.counters.remote(), timeout=30).items()})
        except (RayActorError, GetTimeoutError):
            c.update({k: v for k, v in last_counters.items() if not k.startswith("actors/")})
        c.update({f"faults/{k}": v for k, v in faults.items()})
        return c

    parked: list[int] = []
    slack = cfg.actors * cfg.ray.steps_per_call * cfg.actor.envs_per_actor  # one round of actor calls
    spi = cfg.ray.samples_per_insert
    limiter = SampleToInsertRatio(spi, cfg.replay.min_size, error_buffer=spi * slack) if spi > 0 else None

    def may_act() -> bool:
        """Actors wait while the replay's inserts outrun the learner's samples by more than the
        limiter's band (Reverb's SampleToInsertRatio, its error buffer one round of actor calls);
        before learning starts, and while a restarted replay refills, nothing waits."""
        sent = totals["transitions_sent"]
        if limiter is None or sent <= limiter.min_size_to_sample:
            return True
        try:
            learner_now = ray.get(learner.counters.remote(), timeout=30)
        except (RayActorError, GetTimeoutError):
            return True
        if learner_now["waiting_for_replay"]:
            return True  # a restarted replay must refill before the learner samples again
        return limiter.can_insert(0, inserts=sent, samples=learner_now["samples"], size=sent)

    def note_progress() -> Any:
        """The driver's frame counts and recent returns, for the learner to save with its next checkpoint."""
        return learner.note_progress.remote({k: totals[k] for k in ("frames", "episodes", "param_pulls")},
                                            list(monitor.returns))

    def gauges(c: dict[str, float]) -> dict[str, float]:
        now = int(c.get("learner/replay_waits", 0))
        if now < waits["last"]:  # a restarted learner counts from zero again
            waits["base"] += waits["last"]
        waits["last"] = now
        return {"replay_size": c.get("replay/size", 0), "actor_restarts": faults["actor_restarts"],
                "learner_restarts": faults["learner_restarts"], "replay_waits": waits["base"] + now}

    def save_now() -> str:
        """The learner's checkpoint at the update it reached, with the driver's frame counts."""
        ray.get(note_progress(), timeout=30)
        return ray.get(learner.checkpoint.remote(), timeout=120)

    monitor.start(counters())
    with saved_on_interrupt(save_now):
        while totals["frames"] < cfg.max_frames:
            # a dead actor's unsent data is lost
            parked += collect_reports(pending, totals, monitor, faults, "actor_restarts", pids)
            while parked and may_act():
                i = parked.pop(0)
                pending[actors[i].run.remote(cfg.ray.steps_per_call)] = i
            if parked and not pending:
                time.sleep(0.005)
            if training is not None and ray.wait([training], timeout=0)[0]:
                try:
                    ray.get(training)
                except RayActorError:  # Ray restarts it from its newest checkpoint: one death, counted once
                    count_restart(learner_pid, 0, None, faults, "learner_restarts")
                training, probe = None, learner.pid.remote()  # training is asked for again once it answers
            if probe is not None and ray.wait([probe], timeout=0)[0]:
                try:
                    count_restart(learner_pid, 0, ray.get(probe), faults, "learner_restarts")
                    training, probe = learner.train.remote(), None
                except RayActorError:
                    probe = learner.pid.remote()  # still restarting
            eval_ref = poll_eval(eval_ref, evaluations, monitor)
            if time.perf_counter() - last_log >= cfg.log_every_s:
                last_log = time.perf_counter()
                last_counters = counters()
                monitor.log(last_counters, gauges(last_counters))
                note_progress()
                if cfg.eval_every and cfg.eval_episodes and eval_ref is None and last_counters.get("learner/updates", 0) >= next_eval:
                    params_ref, version = ray.get(learner.params.remote())
                    eval_ref = evaluator.evaluate.remote(params_ref[0], version)
                    next_eval = version + cfg.eval_every
            if hook is not None:
                hook(state)

    def wait() -> None:
        time.sleep(0.2)

    retry(lambda: ray.get(learner.stop.remote()), wait)
    updates = ray.get(training) if training is not None else \
        retry(lambda: ray.get(learner.counters.remote())["updates"], wait)
    ray.get(note_progress())
    ray.get(learner.checkpoint.remote())
    last_counters = counters()
    final = monitor.log(last_counters, gauges(last_counters))
    faults["replay_waits"] = int(final["replay_waits"])
    evaluation = None
    if cfg.eval_episodes:
        params_ref, version = ray.get(learner.params.remote())
        evaluation = ray.get(evaluator.evaluate.remote(params_ref[0], version))
    for handle in [*actors, learner, *shards, *([evaluator] if evaluator else [])]:
        ray.kill(handle)
    return {"frames": int(final["frames"]), "updates": int(updates), "evaluation": evaluation,
            "resumed_from": restored["path"], "replay_size": int(final["replay_size"]),
            "faults": dict(faults), "evaluations": evaluations}


run_apex_dpg = run_apex  # the same driver: only the parts differ (architectures/apex_dpg.py)
