from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 10_000, "rl.gamma": 0.9, "rl.reward_scale": 1.0}),
    checkpoint=("CartPole-v1", {}, {"ps": 1}),
    contracts=(("CartPole-v1", {"ps.store": "sharded"}),),
    chaos=Chaos("CartPole-v1", {"max_frames": 200_000, "ps.store": "sharded", "ps.shards": 2}, 400, 100, 20,
                long=True),
)
