from distrl.envs.partial import CARTPOLE_NO_VELOCITY
from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 3_000, "actors": 2, "replay.min_size": 20, "learner.gamma": 0.9}),
    checkpoint=("CartPole-v1", {"replay.min_size": 4}, {"learner": 1}),
    saves_rng=True,
    # R2D2's greedy return on the velocity-free CartPole swings as DQN's does (tests/test_r2d2_learning.py).
    # Its roles are Ape-X's, whose case runs in CI: this one (5 min) runs in make test-chaos
    chaos=Chaos(CARTPOLE_NO_VELOCITY, {"eval_every": 1000}, 400, 100, 20, best_evaluation=True, long=True),
    cluster=("CartPole-v1", {"actors": 2, "max_frames": 3000, "replay.min_size": 50}),
    minatar=({"replay.min_size": 20},),
    digests={"r2d2": ("CartPole-v1", {"max_frames": 2_000, "replay.min_size": 20})},
)
