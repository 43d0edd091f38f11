"""Ape-X DQN (Horgan et al. 2018): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "apex-atari": ("Horgan et al. 2018, sec. 4.1 and appendix C (the defaults): centered RMSProp by "
                   "TensorFlow's rule (eps 1.5e-7 inside the square root, mean square from 1)", {}),
    "apex-atari-fast": ("distrl: Ape-X for a ~20-minute Atari run on one machine with a GPU (bench/pong.py "
                        "sets actors and shards from the cores). Kept from the paper: batch 512, n=3, double Q, "
                        "dueling, priorities 0.6/0.4, per-actor epsilons 0.4^(1+7i/(N-1)), grad clip 40. Changed: "
                        "8 envs per actor (one batched forward pass), replay 1M with learning from 20k (the paper's "
                        "2M and 50k are sized for days), Adam 2.5e-4 with Huber loss (4x the paper's 6.25e-5, for "
                        "a run of minutes instead of days), targets every 1,000 batches (the paper's 2,500 would "
                        "refresh too seldom in so short a run), 4 samples per insert as a ceiling on the replay "
                        "ratio, 4 replay shards with LZ4 frames (inflating 512 frames is the sampling cost: "
                        "bench/results/learner-path-gpu-h100.jsonl)", {
        "actors": 10, "max_frames": 200_000_000, "log_every_s": 10.0, "checkpoint_every": 5_000,
        "eval_every": 1_000, "eval_episodes": 8, "torch_threads": 1,
        "actor.envs_per_actor": 8,
        "replay.capacity": 1_000_000, "replay.min_size": 20_000, "replay.shards": 4, "replay.codec": "lz4",
        "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber", "learner.target_update": 1_000,
        "replay.samples_per_insert": 4.0,
    }),
    "apex-cartpole": ("distrl: small values that solve CartPole-v1 in 60k frames on one core", {
        "actors": 4, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.pull_every": 50, "actor.flush_size": 50,
        # A 20k FIFO and targets every 50 batches: they solved seeds 1-5 at 60k frames inline, where 100k
        # and 100 fell short on seed 1 (and had solved it on earlier versions of the code: it was at the
        # edge). docs/notes/benchmarks.md, issue 2; those runs left no result file.
        "replay.capacity": 20_000, "replay.min_size": 1_000, "replay.compress": False,
        "learner.batch_size": 64, "learner.lr": 1e-3, "learner.optimizer": "adam",
        "learner.target_update": 50, "learner.grad_clip": 10.0, "learner.loss": "huber",
        "net.hidden": (128, 128), "inline.actor_steps": 4,
        # 16 samples per insert: 4 batches per inline round; on Ray it holds the actors, which free-running
        # would starve the learner on a 2-core machine.
        "replay.samples_per_insert": 16.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    # ---- MinAtar (Young & Tian 2019): 10x10 frames, the MinAtar network, sized for 2 workers on 2 cores.
    # The paper's DQN: batch 32, replay 100k, targets every 1,000 updates, centered RMSProp 2.5e-4,
    # epsilon 1 -> 0.1 over 100k frames, replay start 5,000, gamma 0.99, one update per frame.
    "apex-minatar": ("Ape-X on MinAtar with 2 actors x 4 envs (Ray): from the MinAtar paper's DQN, replay "
                     "100k, replay start 5,000, gamma 0.99, Huber loss; Ape-X's n=3, double Q, dueling, priorities "
                     "(0.6/0.4), per-env epsilons base^(1+7i/7) over the 8 envs with base 0.1 (the MinAtar DQN's "
                     "final epsilon; with Ape-X's 0.4 the short exploratory episodes made most of the training "
                     "mean, which sat well below greedy play: docs/notes/benchmarks.md, Ape-X on MinAtar); "
                     "distrl: batch 128, Adam 2.5e-4 (the learner runs on one core on Ray), targets every 500 "
                     "batches, 8 samples per insert", {
        # 2.5M frames: more than 15 minutes on 2 cores, so a 15-minute run is not cut by frames (at 1.5M, a
        # seed-2 run of 2026-11-29 stopped at 890 s); nothing in Ape-X is scheduled over max_frames
        "actors": 2, "max_frames": 2_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5_000, "eval_episodes": 10,
        "actor.envs_per_actor": 4, "actor.epsilon_base": 0.1, "actor.pull_every": 400, "actor.flush_size": 50,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "learner.batch_size": 128, "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber",
        "learner.grad_clip": 10.0, "learner.target_update": 500,
        "inline.actor_steps": 4,  # 8 samples per insert: 2 batches of 128 per inline round
        "replay.samples_per_insert": 8.0, "ray.steps_per_call": 100, "ray.publish_every": 10,
    }),
}
