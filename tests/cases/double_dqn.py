from dataclasses import replace

from tests.cases.dqn import CASES as DQN_CASES

# DQN's cases (the same roles and small presets); its own digest
CASES = replace(DQN_CASES, digests={"double-dqn": ("CartPole-v1", {"max_frames": 2_000, "replay.min_size": 200})})
