from tests.cases import CONTINUOUS, Cases, Chaos

CASES = Cases(
    smoke=(CONTINUOUS, {"max_frames": 3_000, "replay.min_size": 200, "learner.gamma": 0.9,
                        "net.actor_hidden": (64, 64), "net.critic_hidden": (64, 64)}),
    checkpoint=("Pendulum-v1", {"replay.min_size": 64}, {"learner": 1}),
    contracts=(("Pendulum-v1", {}),),
    saves_rng=True,
    chaos=Chaos("Pendulum-v1", {"max_frames": 60_000}, -300, 150, 15, long=True),
)
