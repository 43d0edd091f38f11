"""Gorila DQN (Nair et al. 2015): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "gorila-atari": ("Nair et al. 2015 (the defaults): 100 bundles, 31 shards, AdaGrad, target every "
                     "60,000 global updates, epsilon 1 -> 0.1 over 1M global updates; DQN's evaluation (epsilon "
                     "0.05, 30 episodes of up to 5 minutes, no-op starts)", {"eval_protocol": "dqn"}),
    "gorila-atari-small": ("distrl: Gorila for a 90-minute Atari run on a small machine (bench/pong.py sets the "
                           "bundles and shards from the cores: 2 bundles and 1 shard on 2 cores). Kept from the "
                           "paper: local replay per bundle, uniform sampling, batch 32, Huber loss, the staleness and "
                           "loss-outlier guards, epsilon 1 -> 0.1 over global updates. Changed, for minutes instead of "
                           "days: epsilon over 15,625 global updates (DQN's 1M frames at 16 agent steps per update), "
                           "targets every 1,000 global updates (apex-atari-fast's; the paper's 60,000 would come once "
                           "in 90 minutes at 2 cores' 17 updates/s), replay start 25,000 per bundle (DQN's 50,000 in all for 2 "
                           "bundles) and 500,000 per bundle (1M in all, as apex-atari-fast), one batch every 16 agent "
                           "steps, not DQN's 4 (2 samples per step, near Ape-X's 2-core ratio: on 2 cores 3.3x "
                           "the frames/s for 0.82x the updates/s, bench/results/gorila-pong-rates-cpu2-issue59.jsonl), Adam "
                           "1e-4 (CleanRL's and rl-baselines3-zoo's DQN rate at batch 32; the paper states no "
                           "AdaGrad rate), n=3 and double Q as gorila-minatar", {
        "actors": 2, "ps.shards": 1, "max_frames": 200_000_000, "log_every_s": 10.0, "checkpoint_every": 5_000,
        "eval_every": 1_000, "eval_episodes": 8,
        "actor.epsilon_updates": 15_625,
        "replay.capacity": 500_000, "replay.min_size": 25_000,
        "learner.n_step": 3, "learner.double_q": True, "learner.target_update": 1_000,
        "learner.optimizer": "adam", "learner.lr": 1e-4,
        "bundle.actor_steps": 16, "bundle.updates": 1,
    }),
    "gorila-cartpole": ("distrl: 1-step DQN values that solve CartPole-v1 with 2 bundles in 80k frames "
                        "(Adam on the server: AdaGrad 0.01 solved it less well in a probe)", {
        "actors": 2, "max_frames": 80_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.epsilon_end": 0.04, "actor.epsilon_updates": 4000, "actor.pull_every": 1,
        "actor.flush_size": 4,
        "replay.capacity": 100_000, "replay.min_size": 1000, "replay.compress": False,
        "learner.batch_size": 128, "learner.target_update": 256, "learner.grad_clip": 10.0,
        "ps.shards": 2, "learner.optimizer": "adam", "learner.lr": 1e-3, "ps.staleness_bound": 20,
        "net.hidden": (128, 128), "bundle.actor_steps": 4, "bundle.updates": 2,
    }),
    "gorila-minatar": ("Gorila on MinAtar with 2 bundles: the MinAtar paper's DQN where it fits (replay "
                       "100k per bundle, replay start 5,000, gamma 0.99, Huber loss, epsilon annealed over 100k "
                       "frames); distrl: final epsilon 0.01 (at the DQN's 0.1 Breakout's training episodes stayed "
                       "low while greedy play did well: one random move loses the ball), batch 128 every 16 agent "
                       "steps per bundle (DQN's 8 samples per step with a quarter of the parameter-server round "
                       "trips: 32 every 4 steps was bound by them on 2 cores; docs/notes/benchmarks.md, Gorila), "
                       "n=3 and double Q as apex-minatar "
                       "(Gorila's DQN is one-step), Adam 2.5e-4 on 2 shards (AdaGrad's rate is unstated in the "
                       "paper), targets every 500 global updates, actors pull every 16 steps; 2.7M frames (about 30 "
                       "minutes on 2 cores)", {
        "actors": 2, "max_frames": 2_700_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5_000, "eval_episodes": 10,
        # 100k frames: 2 bundles x 50k steps, one global update per 16 steps of a bundle
        "actor.epsilon_end": 0.01, "actor.epsilon_updates": 6_250, "actor.flush_size": 4,
        "actor.pull_every": 16,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "learner.batch_size": 128, "learner.n_step": 3, "learner.double_q": True, "learner.target_update": 500,
        "learner.grad_clip": 10.0,
        "ps.shards": 2, "learner.optimizer": "adam", "learner.lr": 2.5e-4, "ps.staleness_bound": 20,
        "bundle.actor_steps": 16, "bundle.updates": 1,
    }),
}
