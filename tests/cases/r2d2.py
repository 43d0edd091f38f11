from distrl.envs.partial import CARTPOLE_NO_VELOCITY
from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 3_000, "actors": 2, "replay.min_size": 20, "learner.gamma": 0.9}),
    checkpoint=("CartPole-v1", {"replay.min_size": 4}, {"learner": 1}),
    saves_rng=True,
    # R2D2's greedy return on the velocity-free CartPole swings as DQN's does (tests/test_r2d2_learning.py)
    chaos=Chaos(CARTPOLE_NO_VELOCITY, {"eval_every": 1000}, 400, 100, 20, best_evaluation=True),
)
