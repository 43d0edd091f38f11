from tests.cases import DISCRETE, Cases, Chaos

CASES = Cases(
    smoke=(DISCRETE, {"max_frames": 10_000, "rl.gamma": 0.9, "rl.reward_scale": 1.0}),
    checkpoint=("CartPole-v1", {}, {"ps": 1}),
    contracts=(("CartPole-v1", {"ps.store": "sharded"}),),
    chaos=Chaos("CartPole-v1", {"max_frames": 200_000, "ps.store": "sharded", "ps.shards": 2}, 400, 100, 20,
                long=True),
    # the shared-memory store lives on the driver's host, where the test's cluster has no CPU: the sharded one
    cluster=("CartPole-v1", {"actors": 2, "max_frames": 3000, "ps.store": "sharded"}),
    minatar=({}, {"algo": "nstep_q"}, {"algo": "onestep_q"}, {"algo": "sarsa"}),
    digests={"a3c": ("CartPole-v1", {"max_frames": 3_000}),
             "a3c-lstm": ("CartPole-v1", {"max_frames": 2_000, "net.lstm": True}),
             "a3c-nstep_q": ("CartPole-v1", {"max_frames": 2_000, "algo": "nstep_q"}),
             "a3c-onestep_q": ("CartPole-v1", {"max_frames": 2_000, "algo": "onestep_q"}),
             "a3c-sarsa": ("CartPole-v1", {"max_frames": 2_000, "algo": "sarsa"}),
             "a3c-gaussian": ("Pendulum-v1", {"max_frames": 2_000, "actors": 2})},
)
