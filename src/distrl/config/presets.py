"""Named hyperparameters with their sources (`distrl presets`), the evaluation protocols, and which
preset a run gets when none is named."""

from __future__ import annotations

from typing import Any

# Evaluation protocols (every one: up to 30 no-op starts on Atari, unclipped game scores). Human starts
# cannot be offered: the papers' start states were never published.
EVAL_PROTOCOLS: dict[str, dict[str, Any]] = {
    "apex": {"eval_epsilon": 0.001, "eval_max_frames": 108_000},  # Ape-X: 30 minutes of play per episode
    "dqn": {"eval_epsilon": 0.05, "eval_episodes": 30, "eval_max_frames": 18_000},  # DQN and Gorila: 5 minutes
}

# TD3's learner (Fujimoto et al. 2018) as SB3 runs it with rl-baselines3-zoo's MuJoCo values, in distrl's
# options: apex-dpg-td3 around one actor and uniform replay, apex-dpg-td3-learner inside Ape-X.
TD3_LEARNER: dict[str, Any] = {
    "actor.sigma": 0.1, "learner.batch_size": 256, "learner.n_step": 1, "learner.lr": 1e-3,
    "learner.actor_grad_clip": 0.0, "learner.tau": 0.005, "learner.twin_critics": True,
    "learner.target_noise": 0.2, "learner.target_noise_clip": 0.5, "learner.policy_delay": 2,
    "net.activation": "relu", "net.critic_action_layer": 0,
}

# apex-dpg-td3-learner's values: TD3's learner with 2 actors on Ray, prioritized replay at 32 samples per insert.
TD3_LEARNER_IN_APEX: dict[str, Any] = {
    "actors": 2, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 5000,
    "eval_every": 2500, "eval_episodes": 5,
    **TD3_LEARNER, "actor.random_frames": 5000, "actor.pull_every": 50, "actor.flush_size": 25,
    "replay.min_size": 10_000, "replay.samples_per_insert": 32.0,
    "inline.actor_steps": 8,  # 32 samples per insert: one batch of 256 per inline round of 8 frames
    "ray.steps_per_call": 50, "ray.publish_every": 4, "learner.fused_adam": True,
    "net.actor_hidden": (256, 256), "net.critic_hidden": (256, 256),
}

# apex-dpg-twin-critics' values: the TD3 learner in Ape-X without target smoothing and policy delay.
TWIN_CRITICS: dict[str, Any] = {
    **TD3_LEARNER_IN_APEX, "eval_every": 1000, "learner.target_noise": 0.0, "learner.policy_delay": 1,
}
DPG_DEFAULT = "apex-dpg-twin-critics-bf16"  # below PAPER_SCALE_ACTORS on MuJoCo-class tasks

# name -> (architecture, source, overrides). Defaults of the dataclasses are the paper's values.
PRESETS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "apex-atari": ("apex", "Horgan et al. 2018, sec. 4.1 and appendix C (the defaults): centered RMSProp by "
                   "TensorFlow's rule (eps 1.5e-7 inside the square root, mean square from 1)", {}),
    "apex-atari-fast": ("apex", "distrl: Ape-X for a ~20-minute Atari run on one machine with a GPU (bench/pong.py "
                        "sets actors and shards from the cores). Kept from the paper: batch 512, n=3, double Q, "
                        "dueling, priorities 0.6/0.4, per-actor epsilons 0.4^(1+7i/(N-1)), grad clip 40. Changed: "
                        "8 envs per actor (one batched forward pass), replay 1M with learning from 20k (the paper's "
                        "2M and 50k are sized for days), Adam 2.5e-4 with Huber loss (4x the paper's 6.25e-5 for "
                        "~30-60 updates/s instead of days of them), targets every 1,000 batches (the paper's 2,500 "
                        "would refresh ~20 times in the run), 4 samples per insert as a ceiling on the replay "
                        "ratio, 4 replay shards with LZ4 frames (inflating 512 frames is the sampling cost)", {
        "actors": 10, "max_frames": 200_000_000, "log_every_s": 10.0, "checkpoint_every": 5_000,
        "eval_every": 1_000, "eval_episodes": 8, "torch_threads": 1,
        "actor.envs_per_actor": 8,
        "replay.capacity": 1_000_000, "replay.min_size": 20_000, "replay.shards": 4, "replay.codec": "lz4",
        "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber", "learner.target_update": 1_000,
        "replay.samples_per_insert": 4.0,
    }),
    "apex-cartpole": ("apex", "distrl: small values that solve CartPole-v1 in 60k frames on one core", {
        "actors": 4, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.pull_every": 50, "actor.flush_size": 50,
        # A 20k FIFO and targets every 50 batches: seeds 1-5 gave 495-500 at 60k frames inline, where
        # 100k and 100 gave seed 1 294.5 (and 500 on earlier versions of the code: it was at the edge).
        "replay.capacity": 20_000, "replay.min_size": 1_000, "replay.compress": False,
        "learner.batch_size": 64, "learner.lr": 1e-3, "learner.optimizer": "adam",
        "learner.target_update": 50, "learner.grad_clip": 10.0, "learner.loss": "huber",
        "net.hidden": (128, 128), "inline.actor_steps": 4,
        # 16 samples per insert: 4 batches per inline round; on Ray it holds the actors, which free-running
        # would starve the learner on a 2-core machine.
        "replay.samples_per_insert": 16.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "dqn-atari": ("dqn", "Mnih et al. 2015, extended data table 1 (the defaults): one actor, replay 1M from 50,000, "
                  "minibatch 32 every 4 actions, RMSProp 2.5e-4 (momentum 0.95, min squared gradient 0.01), "
                  "targets every 10,000 updates, epsilon 1 -> 0.1 over 1M actions, Huber loss; DQN's evaluation "
                  "(epsilon 0.05, 30 episodes of up to 5 minutes, no-op starts)", {}),
    "dqn-cartpole": ("dqn", "distrl: gorila-cartpole's 1-step DQN values with one actor, at half its rate: Adam 5e-4 "
                     "(1e-3 gave seeds 1-3 greedy 500, 500 and 231 at 80k frames; 5e-4 gave 500 on each), batch "
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
    "dqn-minatar": ("dqn", "Young and Tian 2019 (MinAtar), its DQN: replay 100k from 5,000, minibatch 32 every action, "
                    "RMSProp 2.5e-4 (0.95, min squared gradient 0.01, centered), targets every 1,000 updates, "
                    "epsilon 1 -> 0.1 over 100k frames, gamma 0.99, Huber loss, its small CNN; 5M frames, as "
                    "the paper (many hours on 2 cores)", {
        "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000, "eval_every": 5_000,
        "eval_episodes": 10, "actor.epsilon_steps": 100_000, "actor.pull_every": 1, "actor.flush_size": 8,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "replay.samples_per_insert": 32.0, "learner.target_update": 1_000, "inline.actor_steps": 1,
    }),
    "gorila-atari": ("gorila", "Nair et al. 2015 (the defaults): 100 bundles, 31 shards, AdaGrad, target every "
                     "60,000 global updates, epsilon 1 -> 0.1 over 1M global updates; DQN's evaluation (epsilon "
                     "0.05, 30 episodes of up to 5 minutes, no-op starts)", {"eval_protocol": "dqn"}),
    "gorila-cartpole": ("gorila", "distrl: 1-step DQN values that solve CartPole-v1 with 2 bundles in 80k frames "
                        "(Adam on the server: AdaGrad 0.01 reached 283 in a probe)", {
        "actors": 2, "max_frames": 80_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "actor.epsilon_end": 0.04, "actor.epsilon_updates": 4000, "actor.pull_every": 1,
        "actor.flush_size": 4,
        "replay.capacity": 100_000, "replay.min_size": 1000, "replay.compress": False,
        "learner.batch_size": 128, "learner.target_update": 256, "learner.grad_clip": 10.0,
        "ps.shards": 2, "ps.optimizer": "adam", "ps.lr": 1e-3, "ps.staleness_bound": 20,
        "net.hidden": (128, 128), "bundle.actor_steps": 4, "bundle.updates": 2,
    }),
    "a3c-atari": ("a3c", "Mnih et al. 2016 (the defaults): 16 actor-learners, t_max 5, shared RMSProp "
                  "(decay 0.99, eps 0.1, eps inside the square root), lr 7e-4 annealed linearly to 0 over the "
                  "run (optim.lr_sample=loguniform draws it as the paper's sweeps did), entropy 0.01, the A3C "
                  "CNN for all four methods, a rollout's step gradients summed (Algorithm S3 accumulates them)", {}),
    "a3c-cartpole": ("a3c", "distrl: A3C values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate (a3c-cartpole annealed over 200k frames: 142, not 499)
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        # rewards / 10 keep the shared torso's value targets small (unscaled, A3C collapsed to ~15 at
        # 200k frames on Ray); with them lr 2e-3 reached 500 with seeds 1 and 2
        "optim.lr": 2e-3, "rl.reward_scale": 0.1, "net.hidden": (128,), "ray.steps_per_call": 100,
    }),
    "nstep-q-cartpole": ("a3c", "distrl: n-step Q values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 4000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-cartpole": ("a3c", "distrl: one-step Q values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-cartpole": ("a3c", "distrl: one-step Sarsa values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "a3c-pendulum": ("a3c", "distrl: A3C with a Gaussian policy for Pendulum-v1; entropy 0.01, not the paper's 1e-4 "
                     "(with 1e-4 the variance collapsed and the mean stuck at a bound), gamma 0.9, rewards / 8", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "actors": 2, "max_frames": 300_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "optim.lr": 1e-3, "net.hidden": (128,), "rl.entropy_beta": 0.01, "rl.gamma": 0.9,
        "rl.reward_scale": 0.125, "eval_episodes": 10,
    }),
    "apex-dpg-mujoco": ("apex-dpg", "Horgan et al. 2018, appendix D (the defaults): 64 actors on a cluster, Adam 1e-4, "
                        "targets every 100 batches, sigma 0.3, prioritized eviction; batch 512 and n=3 are "
                        "Ape-X DQN's (the paper states no batch for DPG: 'otherwise as per DQN')", {"actors": 64}),
    "apex-dpg-pendulum": ("apex-dpg", "distrl: Ape-X DPG values for Pendulum-v1 with 2 actors (64 samples per insert on "
                          "both placements: with 32 on Ray, 2 of 5 seed-1 chaos runs ended near -940)", {
        "actors": 2, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000, "eval_episodes": 10,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.capacity": 100_000, "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4,  # 64 samples per insert: 4 batches of 128 per inline round
        "replay.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "apex-dpg-td3": ("apex-dpg", "Fujimoto et al. 2018 as SB3's TD3 runs it with rl-baselines3-zoo's MuJoCo values "
                     "(hyperparams/td3.yml at d29756c): one actor, uniform replay of 1M with FIFO eviction, n=1, ReLU "
                     "400-300 networks with the action at the critic's input, batch 256, Adam 1e-3, one update per "
                     "env step, 10,000 random frames and learning from 10,000 transitions, Polyak 0.005, twin "
                     "critics, target smoothing 0.2 clipped at 0.5, policy delay 2, exploration sigma 0.1, no actor "
                     "gradient clipping; for --runtime inline, the check that distrl's DPG learns as TD3 does", {
        "actors": 1, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5000, "eval_episodes": 5,
        **TD3_LEARNER, "actor.random_frames": 10_000, "actor.flush_size": 1, "actor.pull_every": 1,
        "replay.capacity": 1_000_000, "replay.min_size": 10_000, "replay.sampling": "uniform",
        "replay.eviction": "fifo", "replay.samples_per_insert": 256.0, "inline.actor_steps": 1,
        "learner.gamma": 0.99, "net.actor_hidden": (400, 300), "net.critic_hidden": (400, 300),
    }),
    "apex-dpg-small": ("apex-dpg", "distrl: apex-dpg-pendulum's learning values (Adam 1e-3, batch 128, learning from "
                       "1,000 transitions, 64 samples per insert on Ray) for MuJoCo-class tasks with a few actors, "
                       "the default below 32 actors until apex-dpg-one-critic (it leads on Hopper-v5, trails far "
                       "on HalfCheetah-v5: docs/notes/benchmarks.md, issue 33); on HalfCheetah-v5 with 2 actors they gave greedy 1,259 at 100k "
                       "frames (docs/notes/benchmarks.md); 1M frames, evaluated every 2,500 updates", {
        "actors": 2, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 5000,
        "eval_every": 2500, "eval_episodes": 5,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4,  # 64 samples per insert: 4 batches of 128 per inline round
        "replay.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "apex-dpg-td3-learner": ("apex-dpg", "distrl: Ape-X's distributed acting and prioritized replay around "
                             "TD3's learner (Fujimoto et al. 2018) for a few actors: twin critics, target smoothing "
                             "0.2 clipped at 0.5, policy delay 2, Polyak 0.005, n=1, exploration sigma 0.1, ReLU "
                             "256-256 networks with the action at the critic's input, Adam 1e-3 (torch's fused "
                             "kernel), batch 256; prioritized replay (0.6/0.4) with prioritized eviction, 32 samples "
                             "per insert, learning from 10,000 transitions after 5,000 random frames per actor. "
                             "docs/notes/benchmarks.md: on HalfCheetah-v5 1.36x SB3 TD3's greedy return at 20 minutes; on "
                             "Hopper-v5 as slow as TD3 itself, where apex-dpg-small is far ahead. 1M frames, "
                             "evaluated every 2,500 updates", {
        **TD3_LEARNER_IN_APEX,
    }),
    "apex-dpg-one-critic": ("apex-dpg", "distrl: the default below 32 actors from 2026-11-27 until "
                            "apex-dpg-twin-critics. "
                            "apex-dpg-td3-learner with one critic, no target smoothing and no "
                            "policy delay (TD3's Polyak 0.005, n=1, sigma 0.1, ReLU 256-256, batch 256 kept), 2 actors "
                            "on Ray with prioritized replay at 32 samples per insert; evaluated every 1,000 updates. "
                            "docs/notes/benchmarks.md (issue 33): at 20 minutes on 2 cores above SB3's TD3 and SAC on "
                            "HalfCheetah-v5 (seeds 1-3) and Walker2d-v5 (seed 1); on Hopper-v5 above the seed-1 "
                            "peers, but below SAC in the one-session race of seed 2 (325, best 2,246, against "
                            "3,035); below both on Ant-v5 (nobody passed standing still)", {
        **TD3_LEARNER_IN_APEX,
        "eval_every": 1000,
        "learner.twin_critics": False, "learner.target_noise": 0.0, "learner.policy_delay": 1,
    }),
    "apex-dpg-twin-critics": ("apex-dpg", "distrl: the default below 32 actors on the evening of 2026-11-27, "
                              "and what apex-dpg-twin-critics-bf16 runs where the learner has no bf16 units. "
                              "apex-dpg-one-critic with TD3's twin critics back (clipped "
                              "double Q; still no target smoothing and no policy delay), 2 actors on Ray with "
                              "prioritized replay at 32 samples per insert, evaluated every 1,000 updates. "
                              "docs/notes/benchmarks.md (issue 33), 20 minutes on 2 cores, seeds 1 / 2 / 3: HalfCheetah-v5 "
                              "10,262 / 7,645 / 8,680 against TD3's 5,792 / 5,977 / 5,235; Hopper-v5 958 / 3,343 / "
                              "3,298 against SAC's 608 / 3,035 / 2,983 (apex-dpg-one-critic: 735 / 1,674 / 1,389); "
                              "Walker2d-v5 (seed 1) 1,481, best 3,875, against TD3's 310. The second critic costs "
                              "about 15% of the learner's updates/s; Hopper's evaluations still swing (seed 3: "
                              "248-2,788 in minutes 8-16)", {**TWIN_CRITICS}),
    "apex-dpg-twin-critics-bf16": ("apex-dpg", "distrl: the default below 32 actors on MuJoCo-class tasks. "
                                   "apex-dpg-twin-critics with learner.bf16: the hidden layers in bfloat16 where "
                                   "the learner's device has the units (AVX512-BF16 or AMX on a CPU), float32 "
                                   "elsewhere, and so apex-dpg-twin-critics exactly. docs/notes/benchmarks.md (issue 33), "
                                   "20 minutes on 2 cores with AVX512-BF16, seeds 1 / 2 / 3: Hopper-v5 2,211 / 3,262 / "
                                   "2,877 against SAC's 608 / 3,035 / 2,983, passing SAC's score at 0.39x / 0.30x / "
                                   "0.54x of SAC's time (float32: 958 / 3,343 / 3,298; 0.56x / 0.52x / 1.03x); "
                                   "HalfCheetah-v5 10,193 / 10,095 / 10,136 against TD3's 5,792 / 5,977 / 5,235, at "
                                   "0.23x / 0.21x / 0.25x (float32 10,262 / 7,645 / 8,680); Walker2d-v5 (seed 1) 4,301 "
                                   "against TD3's 310 (float32 1,481); Ant-v5 (seed 1) 4,699 against SAC's 381; "
                                   "1.35-1.95x float32's learner updates/s", {
        **TWIN_CRITICS, "learner.bf16": True}),
    "r2d2-atari": ("r2d2", "Kapturowski et al. 2019, table 2 (the defaults): trace 80 after a burn-in of 40, "
                   "sequences every 80 steps, n=5, gamma 0.997, value rescaling (eps 1e-3) without reward clipping, "
                   "Adam 1e-4 eps 1e-3, targets every 2,500 updates, priorities 0.9 max + 0.1 mean with exponent "
                   "0.9, importance sampling 0.6, batch 64, LSTM 512, 256 actors in the paper", {}),
    "r2d2-cartpole": ("r2d2", "distrl: small-run values for CartPole-v1 and distrl/CartPoleNoVelocity-v1 with 2 "
                      "actors: trace 20 after a burn-in of 10, n=3, gamma 0.99, Adam 3e-4, batch 32 sequences, 64 "
                      "sampled per sequence inserted (each step learned from about 64 times), targets every 500 "
                      "updates, LSTM 64 on a 64-unit MLP, replay 20k sequences from 100; 200k frames. Inline, seed "
                      "1, on the velocity-free CartPole, greedy every 500 updates over the run's second half: mean "
                      "397, 10 of 17 at 400 or more (it swings as DQN's does on CartPole); Adam 1e-3 with targets "
                      "every 200 updates gave 374 and 9 of 16", {
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 1000, "eval_episodes": 10,
        "eval_every": 500,
        "actor.flush_size": 2, "actor.pull_every": 100,
        "replay.capacity": 20_000, "replay.min_size": 100, "replay.compress": False, "replay.samples_per_insert": 64.0,
        "learner.batch_size": 32, "learner.burn_in": 10, "learner.trace": 20, "learner.n_step": 3,
        "learner.gamma": 0.99, "learner.lr": 3e-4, "learner.target_update": 500,
        "net.lstm_units": 64, "net.hidden": (64,), "inline.actor_steps": 20,
        "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "ba3c-atari": ("ba3c", "Adamski et al. 2018, table 1 (the defaults): 64 workers, n_sim 10, bs 32, 4 parameter "
                   "servers, Adam lr 1e-3 eps 1e-8 betas 0.8/0.75, sync with 90% of the workers, 128-unit layer", {}),
    "ba3c-cartpole": ("ba3c", "distrl: BA3C values for CartPole-v1 with 2 workers (rewards / 10 and lr 2e-3: "
                      "500 with seeds 1-3 inline; the paper's lr 1e-3 unscaled reached 210 at 200k frames)", {
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 500, "eval_every": 1000,
        "eval_episodes": 10, "ps.shards": 2, "net.hidden": (128,), "optim.lr": 2e-3, "rl.reward_scale": 0.1,
        # annealed: at a constant 2e-3, 2 of 8 chaos runs fell from 500 to 240 and 11 in the last 20k frames
        "optim.anneal": True,
    }),

    # ---- MinAtar (Young & Tian 2019): 10x10 frames, the MinAtar network, sized for 2 workers on 2 cores.
    # The paper's DQN: batch 32, replay 100k, targets every 1,000 updates, centered RMSProp 2.5e-4,
    # epsilon 1 -> 0.1 over 100k frames, replay start 5,000, gamma 0.99, one update per frame.
    "apex-minatar": ("apex", "Ape-X on MinAtar with 2 actors x 4 envs (Ray): from the MinAtar paper's DQN, replay "
                     "100k, replay start 5,000, gamma 0.99, Huber loss; Ape-X's n=3, double Q, dueling, priorities "
                     "(0.6/0.4), per-env epsilons base^(1+7i/7) over the 8 envs with base 0.1 (the MinAtar DQN's "
                     "final epsilon; with Ape-X's 0.4 the short exploratory episodes made most of the training "
                     "mean: 8-10 at 800k frames while greedy play scored 17.7); distrl: batch 128, Adam 2.5e-4 "
                     "(the learner does ~100 updates/s on its core on Ray), targets every 500 batches, 8 samples "
                     "per insert", {
        # 1.5M frames: about 15 minutes on 2 cores (1.5-1.8k frames/s)
        "actors": 2, "max_frames": 1_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5_000, "eval_episodes": 10,
        "actor.envs_per_actor": 4, "actor.epsilon_base": 0.1, "actor.pull_every": 400, "actor.flush_size": 50,
        "replay.capacity": 100_000, "replay.min_size": 5_000, "replay.compress": False,
        "learner.batch_size": 128, "learner.optimizer": "adam", "learner.lr": 2.5e-4, "learner.loss": "huber",
        "learner.grad_clip": 10.0, "learner.target_update": 500,
        "inline.actor_steps": 4,  # 8 samples per insert: 2 batches of 128 per inline round
        "replay.samples_per_insert": 8.0, "ray.steps_per_call": 100, "ray.publish_every": 10,
    }),
    "r2d2-minatar": ("r2d2", "distrl: R2D2 on MinAtar with 2 actors x 4 envs (Ray), from apex-minatar where the two "
                     "share a value (replay of 100k steps from 5,000, gamma 0.99, per-env epsilons base^(1+7i/7) "
                     "over the 8 envs with base 0.1, targets every 500 updates, gradient-norm clip 10); the "
                     "paper's rule scaled to MinAtar's short episodes: trace 40 after a burn-in of 20, a sequence "
                     "every 40 steps, n=5, value rescaling, LSTM 128 on the MinAtar network's 128 units; distrl: "
                     "Adam 2.5e-4 with eps 1e-8 (apex-minatar's; with the paper's eps 1e-3 a 15-minute Breakout "
                     "run on Ray ended at a training return of 3.0, and inline at 190k frames eps 1e-8 had 3.6 "
                     "where 1e-3 had 0.6), batch 32 sequences, 16 sampled per sequence inserted; the torso and the "
                     "LSTM in bfloat16 where the learner has the units (float32 elsewhere): docs/notes/benchmarks.md (issue "
                     "36), seed 1, 2 actors on Ray: Breakout 23.3 at 15 minutes against float32's 16.4, passing the "
                     "MinAtar paper's DQN score of 10 at 401 s against 599 s; SpaceInvaders 55.3 at 11 minutes "
                     "(1.5M frames) against float32's 48.1 at 14, passing 43 at 218 s against 476 s", {
        # 2.5M frames: more than 15 minutes on 2 cores (bf16 with one learner thread made 2,260 frames/s)
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
    "gorila-minatar": ("gorila", "Gorila on MinAtar with 2 bundles: the MinAtar paper's DQN where it fits (replay "
                       "100k per bundle, replay start 5,000, gamma 0.99, Huber loss, epsilon annealed over 100k "
                       "frames); distrl: final epsilon 0.01 (at the DQN's 0.1 Breakout's training episodes scored 7 "
                       "after 13 minutes while greedy play scored 11-13), batch 128 every 16 agent steps per bundle "
                       "(DQN's 8 samples per step with a quarter of the parameter-server round trips: 32 every 4 "
                       "steps ran at 450 frames/s on 2 cores, this at 1,500), n=3 and double Q as apex-minatar "
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
        "ps.shards": 2, "ps.optimizer": "adam", "ps.lr": 2.5e-4, "ps.staleness_bound": 20,
        "bundle.actor_steps": 16, "bundle.updates": 1,
    }),
    "a3c-minatar": ("a3c", "A3C on MinAtar with 2 workers: Mnih et al. 2016's t_max 5, entropy 0.01, shared RMSProp "
                    "(decay 0.99, eps 0.1) with the rate annealed linearly to 0 over the run, on the MinAtar network "
                    "(policy and value heads on its 128 units); distrl: lr 1e-2, the top of the paper's "
                    "LogUniform(1e-4, 1e-2) (distrl's loss is the mean over a rollout's steps where the paper sums "
                    "them; at 1e-3 Breakout stayed near 1.5 after 5 minutes, at 1e-2 its greedy play scored 9.2), "
                    "4.5M frames (about 30 minutes on 2 cores)", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "actors": 2, "max_frames": 4_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 50_000, "eval_episodes": 10, "optim.lr": 1e-2, "optim.anneal": True,
    }),
    "nstep-q-minatar": ("a3c", "n-step Q on MinAtar with 2 workers: Mnih et al. 2016's t_max 5, shared RMSProp, "
                        "per-worker final epsilons; distrl: lr 1e-3, targets every 10k global frames, epsilon over 100k "
                        "frames (the MinAtar paper's DQN anneal)", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-minatar": ("a3c", "one-step Q on MinAtar with 2 workers: as nstep-q-minatar", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-minatar": ("a3c", "one-step Sarsa on MinAtar with 2 workers: as nstep-q-minatar", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "optim.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "optim.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "ba3c-minatar": ("ba3c", "BA3C on MinAtar with 2 workers: Adamski et al. 2018's t_max 5, Adam (betas 0.8/0.75, "
                     "eps 1e-8), sync 0.9, entropy 0.01, on the MinAtar network; distrl: n_sim 16 and bs 64 (the "
                     "paper's 10 and 32 ran at 2,600 frames/s on 2 cores, a round's round trips being the limit; 16 "
                     "and 64 at 4,400-5,200), lr 3e-3 annealed to 0 over the run, 2 shards; 7.5M frames (about 30 "
                     "minutes; Breakout 10 at 6 minutes, after 5 minutes near 6 as lr 5e-4 and 1e-3 also were)", {
        "actors": 2, "max_frames": 7_500_000, "log_every_s": 10.0, "checkpoint_every": 2_000, "eval_every": 2_000,
        "eval_episodes": 10, "ps.shards": 2, "optim.lr": 3e-3, "optim.anneal": True,
        "worker.n_sim": 16, "worker.batch_size": 64,
    }),
}


PAPER_SCALE_ACTORS = 32  # from this many actors a continuous-control run gets the paper's values


def choose_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> tuple[str, str]:
    """The preset a run gets when none is named, and why (the first line `distrl train` prints): the
    paper's values on Atari, MinAtar's on MinAtar, small ones elsewhere, and for Ape-X DPG the scale
    of the run (its actor count: the paper's values need 64 actors and many millions of frames). An
    architecture registered without those presets gets its first."""
    name, why = _by_env(architecture, env_id, algo, actors)
    if name not in PRESETS:
        own = [p for p, (arch, _, _) in PRESETS.items() if arch == architecture]
        if own:
            return own[0], "the first preset registered with it"
    return name, why


def _by_env(architecture: str, env_id: str, algo: str, actors: int | None) -> tuple[str, str]:
    from distrl.envs import continuous_actions, is_atari, is_minatar
    q_method = architecture == "a3c" and algo in ("nstep_q", "onestep_q", "sarsa")
    if is_minatar(env_id) and architecture != "apex-dpg":
        name = f"{algo.replace('_', '-')}-minatar" if q_method else f"{architecture}-minatar"
        return name, "the default for MinAtar ids"
    if architecture == "apex-dpg":
        if env_id.startswith("Pendulum"):
            return "apex-dpg-pendulum", "the default for Pendulum"
        if actors is not None and actors >= PAPER_SCALE_ACTORS:
            return "apex-dpg-mujoco", f"{actors} actors: the paper's values"
        n = PRESETS[DPG_DEFAULT][2]["actors"] if actors is None else actors
        return DPG_DEFAULT, (f"{n} actors; the paper's values are apex-dpg-mujoco (chosen from "
                                       f"{PAPER_SCALE_ACTORS} actors, or with --preset apex-dpg-mujoco)")
    if is_atari(env_id):
        return f"{architecture}-atari", "the paper's values, the default for Atari ids"
    if architecture == "a3c" and continuous_actions(env_id):
        return "a3c-pendulum", "the default for continuous actions (the paper's Gaussian policy, small-run values)"
    name = f"{algo.replace('_', '-')}-cartpole" if q_method else f"{architecture}-cartpole"
    paper = "a3c-atari" if architecture == "a3c" else f"{architecture}-atari"
    return name, f"small-run values, the default for non-Atari ids; the paper's are {paper}"


def default_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> str:
    return choose_preset(architecture, env_id, algo, actors)[0]


def learning_start_frames(cfg: Any) -> int:
    """Env frames before the first learner update, at the earliest: replay-based learners wait for
    replay.min_size transitions (Gorila's local tables: in every bundle); A3C and BA3C learn from
    their first rollout."""
    replay = getattr(cfg, "replay", None)
    if replay is None or not hasattr(replay, "min_size"):
        return 0
    from distrl.envs import is_atari
    tables = cfg.actors if cfg.architecture == "gorila" and replay.mode == "local" else 1
    steps = (cfg.actor.sequence_period or cfg.learner.trace) if cfg.architecture == "r2d2" else 1  # per item
    return replay.min_size * tables * steps * (4 if is_atari(cfg.env) else 1)


def describe_preset(cfg: Any, named: bool, actors: int | None = None) -> str:
    """The first line of a new run: its preset and why, and a warning when the replay would not start
    learning within the first 10% of the run's frames (the paper's values on a short run)."""
    if named:
        line = f"preset {cfg.preset}: named with --preset"
    else:
        algo = getattr(cfg, "algo", "")
        line = f"preset {cfg.preset}: {choose_preset(cfg.architecture, cfg.env, algo, actors)[1]}"
    start = learning_start_frames(cfg)
    if start > 0.1 * cfg.max_frames:
        line += (f"\nnote: learning starts after {start:,} frames (replay.min_size {cfg.replay.min_size:,}), "
                 f"{start / cfg.max_frames:.0%} of this run's {cfg.max_frames:,}: give --max-frames "
                 f"{10 * start:,} or more, --set replay.min_size=..., or a smaller preset")
    return line
