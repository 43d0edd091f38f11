from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 3_000, "replay.min_size": 200, "learner.gamma": 0.9,
                      "actor.epsilon_steps": 1_500}),
    checkpoint=("CartPole-v1", {"replay.min_size": 64}, {"learner": 1}),
    saves_rng=True,
    actors=1,
    chaos=Chaos("CartPole-v1", {"max_frames": 80_000, "eval_every": 2000}, 400, 200, 10, best_evaluation=True,
                long=True),
    cluster=("CartPole-v1", {"max_frames": 3000, "replay.min_size": 200}),
    minatar=({"replay.min_size": 500},),
    digests={"double-dqn": ("CartPole-v1", {"max_frames": 2_000, "replay.min_size": 200})},
)
