from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 3_000, "replay.min_size": 200, "learner.gamma": 0.9,
                      "learner.target_update": 64}),
    checkpoint=("CartPole-v1", {"replay.min_size": 32, "ps.shards": 2}, {"ps": 2}),
    contracts=(("CartPole-v1", {}), ("CartPole-v1", {"replay.mode": "global"})),
    # The shards' lr annealed: at the preset's 80k and constant lr, 3 of 4 chaos runs ended at 119-159.
    # Gorila's one-step DQN can collapse late on CartPole even undisturbed (a run of this config held a
    # training return of 500 for 20k frames, then ended at 82.3), so the best greedy evaluation of the
    # run (every 8,000 global updates and at the end); a bundle kill also empties that bundle's replay,
    # hence the longer period.
    chaos=Chaos("CartPole-v1", {"max_frames": 160_000, "ps.shards": 2, "learner.anneal": True, "eval_every": 8000},
                400, 100, 30, best_evaluation=True, long=True),
    cluster=("CartPole-v1", {"actors": 2, "max_frames": 3000, "replay.min_size": 200}),
    minatar=({"replay.min_size": 500},),
    digests={"gorila": ("CartPole-v1", {"max_frames": 2_000, "replay.min_size": 200}),
             "gorila-global": ("CartPole-v1", {"max_frames": 2_000, "replay.min_size": 200, "replay.mode": "global"})},
)
