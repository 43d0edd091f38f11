"""bench/role_cpu.py: each process is put under the role its title names, and a window's CPU seconds become
cores busy, by hand."""

from bench import role_cpu


def test_roles_come_from_ray_titles_the_driver_and_ray_daemons():
    assert role_cpu.role_of("ray::LearnerWorker.run") == "LearnerWorker"
    assert role_cpu.role_of("ray::ReplayShard") == "ReplayShard"
    assert role_cpu.role_of("ray::IDLE") == "IDLE"
    assert role_cpu.role_of("/x/.venv/bin/python -m distrl.cli train apex --quiet --env ALE/Pong-v5") == "driver"
    assert role_cpu.role_of("/x/ray/core/src/ray/raylet/raylet --raylet_socket_name=...") == "ray daemons"
    assert role_cpu.role_of("bench/peers/.venv/bin/python -m bench.peers.ppo_pong") == "other"


def test_a_window_counts_each_roles_cpu_seconds_as_cores_busy():
    before = {1: ("LearnerWorker", 100.0), 2: ("ActorWorker", 50.0), 3: ("ActorWorker", 10.0)}
    # pid 4 started within the window (counted from 0); pid 3 ended (not counted: its last seconds are unknown)
    after = {1: ("LearnerWorker", 190.0), 2: ("ActorWorker", 95.0), 4: ("ActorWorker", 15.0)}
    # over 100 s: the learner 90 s -> 0.9 cores; the actors 45 + 15 s -> 0.6
    assert role_cpu.by_role(before, after, 100.0) == {"LearnerWorker": 0.9, "ActorWorker": 0.6}
