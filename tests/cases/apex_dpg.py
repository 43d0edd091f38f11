from tests.cases import CONTINUOUS, Cases, Chaos

SMALL = {"replay.min_size": 200, "net.actor_hidden": (32, 32), "net.critic_hidden": (32, 32)}

CASES = Cases(
    smoke=(CONTINUOUS, {"max_frames": 3_000, "replay.min_size": 200, "learner.gamma": 0.9,
                        "net.actor_hidden": (64, 64), "net.critic_hidden": (64, 64)}),
    checkpoint=("Pendulum-v1", {"replay.min_size": 64}, {"learner": 1}),
    contracts=(("Pendulum-v1", {}),),
    saves_rng=True,
    chaos=Chaos("Pendulum-v1", {"max_frames": 60_000}, -300, 150, 15, long=True),
    cluster=("Pendulum-v1", {"actors": 2, "max_frames": 2000, "replay.min_size": 200, "net.actor_hidden": "32,32",
                             "net.critic_hidden": "32,32"}),
    minatar=(),
    digests={"apex-dpg": ("Pendulum-v1", {"max_frames": 2_000, **SMALL}),
             "apex-dpg-td3": ("Pendulum-v1", {"max_frames": 2_000, **SMALL, "learner.twin_critics": True,
                                              "learner.tau": 0.005, "learner.target_noise": 0.2,
                                              "learner.policy_delay": 2, "replay.sampling": "uniform",
                                              "replay.eviction": "fifo", "net.obs_norm": True})},
)
