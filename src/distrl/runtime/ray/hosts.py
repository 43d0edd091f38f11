"""The parameter-shard and evaluator hosts the A3C and BA3C Ray drivers share: each wraps a plain
component of distrl.components or distrl.params (Ape-X's roles are distrl.components.workers)."""

from __future__ import annotations

import numpy as np
import torch

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.components.workers import ShardWorker
from distrl.runtime.ray.placement import RayTransport


class ShardHost(ShardWorker):
    """components.workers.ShardWorker built from a config dict, for the A3C and BA3C Ray drivers (until
    they run on runtime/driver.py, which starts roles from the wiring itself)."""

    def __init__(self, cfg_dict: dict, index: int, run_dir: str):
        cfg = C.from_dict(cfg_dict)
        cfg.run_dir = run_dir
        super().__init__(make_architecture(cfg), index, {}, RayTransport)


class EvaluatorHost:
    def __init__(self, cfg_dict: dict):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.evaluator = make_architecture(cfg).make_evaluator()

    def evaluate(self, params: dict[str, np.ndarray], updates: int) -> dict:
        return {**self.evaluator.evaluate({k: torch.from_numpy(v) for k, v in params.items()}),
                "updates": updates}
