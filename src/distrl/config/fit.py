"""Presets sized from the machine they start on. `apex-atari-fast` is Ape-X for a short Atari run on one
machine; how many actors, shards and envs, and where the learner runs, depend on the cores, a GPU and
the memory there (bench/pong.py measured each choice). A key the user sets keeps the user's value."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

FITTED = ("apex-atari-fast",)
RAW_FRAMES_GIB = 64  # memory from which the replay keeps raw frames: 1M transitions hold ~8 GB of them, shared


@dataclass(frozen=True)
class Machine:
    cores: int
    gpu: bool
    memory_gib: float
    bf16: bool  # the CPU computes bfloat16 in hardware (AVX512-BF16 or AMX)

    @classmethod
    def here(cls) -> Machine:
        import torch

        from distrl.nets.precision import has_bf16_units

        return cls(cores=len(os.sched_getaffinity(0)), gpu=torch.cuda.is_available(),
                   memory_gib=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
                   bf16=has_bf16_units("cpu"))


def atari_plan(machine: Machine) -> tuple[dict[str, Any], str]:
    """apex-atari-fast's overrides for `machine`, and why. Ray gives every actor, replay shard, the learner
    and the evaluator one logical CPU each; the driver and Ray's own processes use the slack."""
    cores = machine.cores
    if machine.gpu:
        shards = 4 if cores >= 12 else 2
        actors = max(1, cores - shards - 2)
        # The actors' forward passes on 0.05 of the GPU each made 1.35x the frames/s of CPU ones on the H100, and
        # ale-py's vector env steps games 1.35x faster per core (issue 34); the learner takes the GPU the
        # actors leave.
        share = 0.05
        # Each frame once and raw where the memory holds it: more samples/s from the shards than LZ4 stacks
        # (bench/learner_path.py, issue 34); else the preset's LZ4 stacks.
        raw = machine.memory_gib >= RAW_FRAMES_GIB
        frames = {"replay.share_frames": True, "replay.compress": False} if raw else {}
        return ({"actors": actors, "replay.shards": shards, "actor.envs_per_actor": 8, "learner.batch_size": 512,
                 "learner.prefetch_threads": 4, "ray.actor_gpus": share, "actor.vector_env": True,
                 "ray.learner_gpus": round(1 - share * actors, 2), **frames},
                f"{cores} cores and a GPU: learner on the GPU at the paper's batch 512 with 4 sample threads, {shards} "
                f"replay shards (sampled frames are their work"
                + (f"; {machine.memory_gib:.0f} GiB: each frame stored once, raw" if raw else "; LZ4 stacks") +
                f"), the evaluator, and {actors} actors x 8 envs "
                f"on the rest, stepped in ale-py's vector env, their forward passes on {share:g} of the GPU each")
    # No GPU: a CPU learner makes a few batches/s of 64 on 2 cores; at batch 512 it would make less than one.
    # One shard, and the replay ratio held at 2 so the actors leave the learner its core. A CPU with bf16
    # units steps the learner faster in bfloat16 (bench/dqn_learner_step.py). The roles take every core, so
    # the learner gets one torch thread: two threads beside a busy process made fewer steps than one. Torch's
    # fused Adam made 1.09x the updates/s of its per-tensor loop late in a 2-core run (bench/resumed_window.py,
    # issue 59), where Adam was a third of the learner's time.
    actors = max(1, cores - 3)
    return ({"actors": actors, "replay.shards": 1, "actor.envs_per_actor": 4, "learner.batch_size": 64,
             "ray.learner_gpus": 0, "replay.samples_per_insert": 2.0, "torch_threads": 1, "actor.vector_env": True,
             "learner.fused_adam": True, **({"learner.bf16": True} if machine.bf16 else {})},
            f"{cores} cores, no GPU: learner on the CPU at batch 64" + (" in bfloat16" if machine.bf16 else "") +
            f" on one torch thread with fused Adam, 1 replay shard, {actors} actor(s) x 4 envs in ale-py's vector "
            "env, 2 samples per insert")


def fitted(preset: str, runtime: str, address: str, given: dict[str, Any],
           machine: Machine | None = None) -> tuple[dict[str, Any], str] | None:
    """The overrides that size `preset` for this machine, less the keys in `given`, and why; None where
    the preset is not sized (most are) or the run joins a cluster (its machines are not this one)."""
    if preset not in FITTED:
        return None
    if runtime != "ray" or address or os.environ.get("RAY_ADDRESS"):
        return {}, f"{preset} is sized for one machine on --runtime ray; its own values are used here"
    values, why = atari_plan(machine or Machine.here())
    return {k: v for k, v in values.items() if k not in given}, f"sized for this machine: {why}"
