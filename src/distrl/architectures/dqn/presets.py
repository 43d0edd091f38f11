"""DQN (Mnih et al. 2015): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "dqn-atari": ("Mnih et al. 2015, extended data table 1 (the defaults): one actor, replay 1M from 50,000, "
                  "minibatch 32 every 4 actions, RMSProp 2.5e-4 (momentum 0.95, min squared gradient 0.01), "
                  "targets every 10,000 updates, epsilon 1 -> 0.1 over 1M actions, Huber loss; DQN's evaluation "
                  "(epsilon 0.05, 30 episodes of up to 5 minutes, no-op starts)", {}),
    "dqn-cartpole": ("distrl: gorila-cartpole's 1-step DQN values with one actor, at half its rate: Adam 5e-4 "
                     "(at 1e-3 not every one of seeds 1-3 solved it in 80k frames; at 5e-4 each did), batch "
                     "128 with 64 samples per insert (2 batches per 4 actions), targets every 256 updates, gradient "
                     "norm clipped at 10, replay 100k from 1,000, epsilon 1 -> 0.04 over 10,000 actions, 128-128 MLP", {
        "max_frames": 80_000, "log_every_s": 2.0, "checkpoint_every": 2000, "eval_episodes": 10,
        "eval_protocol": "apex",
        "actor.epsilon_final": 0.04, "actor.epsilon_steps": 10_000, "actor.pull_every": 4,
        "replay.capacity": 100_000, "replay.min_size": 1000, "replay.compress": False,
        "replay.samples_per_insert": 64.0,
        "learner.batch_size": 128, "learner.optimizer": "adam", "learner.lr": 5e-4, "learner.target_update": 256,
        "learner.grad_clip": 10.0, "net.hidden": (128, 128),
        "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "dqn-minatar": ("Young and Tian 2019 (MinAtar), its DQN: replay 100k from 5,000, minibatch 32 every action, "
                    "RMSProp 2.5e-4 (0.95, min squared gradient 0.01, centered), targets every 1,000 updates, "
                    "epsilon 1 -> 0.1 over 100k frames, gamma 0.99, Huber loss, its small CNN; 5M frames, as "
                    "the paper (many hours on 2 cores)", {
        "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000, "eval_every": 5_000,
        "eval_episodes": 10, "actor.epsilon_steps": 100_000, "actor.pull_every": 1, "actor.flush_size": 8,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "replay.samples_per_insert": 32.0, "learner.target_update": 1_000, "inline.actor_steps": 1,
    }),
}
