"""Environments: construction with the papers' preprocessing, evaluation, and Atari score normalisation."""

from distrl.envs.evaluation import evaluate
from distrl.envs.make import continuous_actions, is_atari, is_minatar, make_env
from distrl.envs.scores import ATARI_SCORES, game_name, human_normalized

__all__ = ["ATARI_SCORES", "continuous_actions", "evaluate", "game_name", "human_normalized", "is_atari", "is_minatar", "make_env"]
