"""Double DQN: named values with their sources (`distrl presets`). Each is DQN's preset of the same env
kind with the variant's three changes, which are the config's defaults."""

from __future__ import annotations

from typing import Any

from distrl.architectures.dqn.presets import PRESETS as DQN_PRESETS

CHANGES = ("the Double DQN target (van Hasselt et al. 2016), a dueling head (Wang et al. 2016) and Adam, "
           "step 6.25e-5 and epsilon 1.5e-4 (Hessel et al. 2018, Rainbow)")

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "double-dqn-atari": (f"dqn-atari's values (Mnih et al. 2015) with {CHANGES}", {}),
    "double-dqn-cartpole": ("dqn-cartpole's values, its Adam 5e-4 included, with the Double DQN target and a "
                            "dueling head", dict(DQN_PRESETS["dqn-cartpole"][1])),
    "double-dqn-minatar": (f"dqn-minatar's values (Young and Tian 2019) with {CHANGES}; not tuned for MinAtar",
                           dict(DQN_PRESETS["dqn-minatar"][1])),
}
