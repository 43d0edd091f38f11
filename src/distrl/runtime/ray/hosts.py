"""The parameter-shard and evaluator hosts the Gorila, A3C and BA3C drivers share: each wraps a plain
component of distrl.components or distrl.params (Ape-X's roles are distrl.components.workers)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from distrl import config as C
from distrl.architectures import make_architecture
from distrl.checkpoint import state_digest
from distrl.params.param_server import ParamShard


class ShardHost(ParamShard):
    """A parameter-server shard in its own process (Gorila, A3C's sharded store). A restarted one
    (or one started for --resume) begins from its slice of the newest checkpoint of the run."""

    def __init__(self, cfg_dict: dict, index: int, run_dir: str):
        torch.set_num_threads(1)
        arch = make_architecture(C.from_dict(cfg_dict))
        values, options = arch.shard_args(index)
        super().__init__(values, **options)
        data = arch.restore(Path(run_dir), required=False)
        self.restored_from = data["path"] if data else None
        if data:
            self.load_state_dict(data["roles"]["ps"][index])
        self.restored_digest = state_digest(self.state_dict()) if data else None

    def restored(self) -> dict:
        """The checkpoint this incarnation loaded its slice from, and a digest of its state then."""
        return {"path": self.restored_from, "digest": self.restored_digest, "pid": os.getpid()}


class EvaluatorHost:
    def __init__(self, cfg_dict: dict):
        cfg = C.from_dict(cfg_dict)
        torch.set_num_threads(1)
        self.evaluator = make_architecture(cfg).make_evaluator()

    def evaluate(self, params: dict[str, np.ndarray], updates: int) -> dict:
        return {**self.evaluator.evaluate({k: torch.from_numpy(v) for k, v in params.items()}),
                "updates": updates}
