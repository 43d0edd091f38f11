from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 20_000, "rl.gamma": 0.9}),
    checkpoint=("CartPole-v1", {"ps.shards": 3}, {"ps": 3}),
    # With its lr annealed, one CI chaos run of 2026-11-28 still ended at a greedy 255.5 (two reruns
    # passed), the late dip its undisturbed runs also show; its evaluations count from the shard's restore.
    chaos=Chaos("CartPole-v1", {"max_frames": 200_000, "eval_every": 500}, 400, 100, 12, best_evaluation=True,
                long=True),
    cluster=("CartPole-v1", {"actors": 2, "max_frames": 4000}),
    minatar=({"eval_every": 0},),
    digests={"ba3c": ("CartPole-v1", {"max_frames": 4_000}),
             "ba3c-async": ("CartPole-v1", {"max_frames": 4_000, "sync.mode": "async"})},
)
