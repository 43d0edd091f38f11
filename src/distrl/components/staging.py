"""Sampled batches onto a GPU learner's device from the sample threads, through page-locked memory."""

from __future__ import annotations

import threading
from typing import Any, cast

import numpy as np
import torch


class DeviceStager:
    """Samples `n` from a replay client and, where the learner is on a CUDA device, puts the image fields
    there before the learner's step asks for them.

    The Pong profile (issue 34) had the learner's sample thread joining the shards' parts with
    np.concatenate (29% of its time) and the step copying the batch from pageable memory to the GPU (18%).
    Here the parts are joined straight into a page-locked buffer of the sampling thread's own (no second
    host copy), copied on that thread's own CUDA stream, and handed over as device tensors, so the copy
    overlaps the step's compute. Other fields and every field on a CPU learner stay numpy arrays."""

    def __init__(self, device: str | torch.device, fields: tuple[str, ...]):
        self.device = torch.device(device)
        self.fields = tuple(fields) if self.device.type == "cuda" else ()
        self._local = threading.local()  # each sampling thread's buffers and stream

    def sample(self, replay: Any, n: int) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
        """(keys, batch, weights) as replay.sample(n) gives them, the staged fields as device tensors."""
        if not self.fields:
            return cast(tuple[np.ndarray, dict[str, Any], np.ndarray], replay.sample(n))
        local = self._local
        out = getattr(local, "out", None)
        keys, batch, weights = replay.sample(n, out=out)
        if out is None:  # the thread's first batch: its buffers take the batch's shapes
            out = local.out = {k: _pinned_like(batch[k]) for k in self.fields}
            local.stream = torch.cuda.Stream(self.device)
            for k in self.fields:
                np.copyto(out[k], batch[k])
        with torch.cuda.stream(local.stream):
            staged = {k: torch.from_numpy(out[k]).to(self.device, non_blocking=True) for k in self.fields}
        local.stream.synchronize()  # the buffers are free for this thread's next batch
        consumer = torch.cuda.default_stream(self.device)
        for t in staged.values():
            t.record_stream(consumer)  # not reused by this stream's allocations while the step still reads it
        return keys, {**batch, **staged}, weights


def _pinned_like(a: np.ndarray) -> np.ndarray:
    return torch.empty(a.shape, dtype=torch.from_numpy(a[:0]).dtype).pin_memory().numpy()
