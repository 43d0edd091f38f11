"""R2D2 (Kapturowski et al. 2019): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "r2d2-atari": ("Kapturowski et al. 2019, table 2 (the defaults): trace 80 after a burn-in of 40, "
                   "sequences every 80 steps, n=5, gamma 0.997, value rescaling (eps 1e-3) without reward clipping, "
                   "Adam 1e-4 eps 1e-3, targets every 2,500 updates, priorities 0.9 max + 0.1 mean with exponent "
                   "0.9, importance sampling 0.6, batch 64, LSTM 512, 256 actors in the paper", {}),
    "r2d2-cartpole": ("distrl: small-run values for CartPole-v1 and distrl/CartPoleNoVelocity-v1 with 2 "
                      "actors: trace 20 after a burn-in of 10, n=3, gamma 0.99, Adam 3e-4, batch 32 sequences, 64 "
                      "sampled per sequence inserted (each step learned from about 64 times), targets every 500 "
                      "updates, LSTM 64 on a 64-unit MLP, replay 20k sequences from 100; 200k frames. Adam 3e-4 "
                      "and targets every 500 were chosen over Adam 1e-3 and every 200 in inline tuning on the "
                      "velocity-free CartPole, for slower swings of the greedy return (it swings as DQN's does on "
                      "CartPole); its memory at work: bench/results/r2d2-memory-seed1.jsonl", {
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 1000, "eval_episodes": 10,
        "eval_every": 500,
        "actor.flush_size": 2, "actor.pull_every": 100,
        "replay.capacity": 20_000, "replay.min_size": 100, "replay.compress": False, "replay.samples_per_insert": 64.0,
        "learner.batch_size": 32, "learner.burn_in": 10, "learner.trace": 20, "learner.n_step": 3,
        "learner.gamma": 0.99, "learner.lr": 3e-4, "learner.target_update": 500,
        "net.lstm_units": 64, "net.hidden": (64,), "inline.actor_steps": 20,
        "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "r2d2-minatar": ("distrl: R2D2 on MinAtar with 2 actors x 4 envs (Ray), from apex-minatar where the two "
                     "share a value (replay of 100k steps from 5,000, gamma 0.99, per-env epsilons base^(1+7i/7) "
                     "over the 8 envs with base 0.1, targets every 500 updates, gradient-norm clip 10); the "
                     "paper's rule scaled to MinAtar's short episodes: trace 40 after a burn-in of 20, a sequence "
                     "every 40 steps, n=5, value rescaling, LSTM 128 on the MinAtar network's 128 units; distrl: "
                     "Adam 2.5e-4 with eps 1e-8 (apex-minatar's; with the paper's eps 1e-3 the training return "
                     "stayed lower on Breakout, on Ray and inline: at MinAtar's small early Q-values it damps every "
                     "step), batch 32 sequences, 16 sampled per sequence inserted; the torso and the LSTM in "
                     "bfloat16 where the learner has the units (float32 elsewhere): docs/notes/benchmarks.md (issue "
                     "36), seed 1, 2 actors on Ray: ahead of float32 on Breakout and SpaceInvaders, and past the "
                     "MinAtar paper's DQN scores sooner (bench/results/minatar-Breakout-seed1.jsonl, "
                     "minatar-SpaceInvaders-seed1.jsonl and minatar-SpaceInvaders-seed1-840s.jsonl)", {
        # 2.5M frames: more than 15 minutes on 2 cores, so a 15-minute run is not cut by frames
        "actors": 2, "max_frames": 2_500_000, "learner.bf16": True, "log_every_s": 10.0, "checkpoint_every": 2000,
        "eval_every": 1000, "eval_episodes": 10,
        "actor.envs_per_actor": 4, "actor.epsilon_base": 0.1, "actor.pull_every": 400, "actor.flush_size": 4,
        "replay.capacity": 2_500, "replay.min_size": 125, "replay.compress": False, "replay.samples_per_insert": 16.0,
        "learner.batch_size": 32, "learner.burn_in": 20, "learner.trace": 40, "learner.n_step": 5,
        "learner.gamma": 0.99, "learner.lr": 2.5e-4, "learner.adam_eps": 1e-8, "learner.target_update": 500,
        "learner.grad_clip": 10.0, "net.lstm_units": 128,
        "inline.actor_steps": 20,  # 2 batches of 32 per inline round (8 envs x 20 steps)
        "ray.steps_per_call": 100, "ray.publish_every": 10,
    }),
}
