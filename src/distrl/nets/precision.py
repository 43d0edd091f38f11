"""bfloat16 in the learners (`learner.bf16`) and Ape-X's actors (`actor.bf16`), for CPUs with bf16 units:
the networks' hidden layers run in autocast, their output layers in float32. A q of 1,000 in bfloat16 is
1,000 +- 4, a TD error's size."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import torch
from torch import nn

CPU_BF16_FLAGS = re.compile(r"\b(avx512_bf16|amx_bf16)\b")
_noted: set[tuple[str, str]] = set()


def bf16_autocast(device: torch.device, enabled: bool) -> torch.autocast:
    """The learner's forward passes under bfloat16 autocast where `enabled`; a no-op context otherwise."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def in_float32(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """layer(x) in float32, also inside a bfloat16 autocast: for output layers. Outside one (the actors, float32
    learners) it is layer(x) itself: entering the context cost ~3.4 us a call, 6% of a MinAtar forward pass."""
    if not torch.is_autocast_enabled(x.device.type):
        return layer(x)
    with torch.autocast(x.device.type, enabled=False):
        return layer(x.float())


def has_bf16_units(device: torch.device | str, cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether `device` computes bfloat16 in hardware: a CUDA GPU that supports it, or a CPU with AVX512-BF16
    or AMX (read from Linux's cpuinfo; elsewhere no). Without the units autocast emulates bfloat16, slower
    than float32."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        return device.type == "cpu" and bool(CPU_BF16_FLAGS.search(cpuinfo.read_text()))
    except OSError:
        return False


def use_bf16(asked: bool, device: torch.device | str, cpuinfo: Path = Path("/proc/cpuinfo"),
             option: str = "learner.bf16") -> bool:
    """`option` (learner.bf16, actor.bf16) on this device: bfloat16 where asked and the device has the
    units; float32, with a note, where asked and it has not (there bfloat16 would only be slower)."""
    if not asked:
        return False
    if has_bf16_units(device, cpuinfo):
        return True
    if (option, str(device)) not in _noted:  # once per process: a runtime may build a role more than once
        _noted.add((option, str(device)))
        print(f"distrl: {option} is on but its device ({device}) has no bfloat16 units (a CPU needs "
              "AVX512-BF16 or AMX); it runs in float32", file=sys.stderr)
    return False
