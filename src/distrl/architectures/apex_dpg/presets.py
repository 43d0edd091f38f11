"""Ape-X DPG (Horgan et al. 2018, appendix D): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

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

PAPER_SCALE_ACTORS = 32  # from this many actors a continuous-control run gets the paper's values


# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "apex-dpg-mujoco": ("Horgan et al. 2018, appendix D (the defaults): 64 actors on a cluster, Adam 1e-4, "
                        "targets every 100 batches, sigma 0.3, prioritized eviction; batch 512 and n=3 are "
                        "Ape-X DQN's (the paper states no batch for DPG: 'otherwise as per DQN')", {"actors": 64}),
    "apex-dpg-pendulum": ("distrl: Ape-X DPG values for Pendulum-v1 with 2 actors (64 samples per insert on "
                          "both placements: with 32 on Ray, seed-1 chaos runs learned too slowly for 60k frames)", {
        "actors": 2, "max_frames": 60_000, "log_every_s": 2.0, "checkpoint_every": 2000, "eval_episodes": 10,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.capacity": 100_000, "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4,  # 64 samples per insert: 4 batches of 128 per inline round
        "replay.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "apex-dpg-td3": ("Fujimoto et al. 2018 as SB3's TD3 runs it with rl-baselines3-zoo's MuJoCo values "
                     "(hyperparams/td3.yml at d29756c): one actor, uniform replay of 1M with FIFO eviction, n=1, ReLU "
                     "400-300 networks with the action at the critic's input, batch 256, Adam 1e-3, one update per "
                     "env step, 10,000 random frames and learning from 10,000 transitions, Polyak 0.005, twin "
                     "critics, target smoothing 0.2 clipped at 0.5, policy delay 2, exploration sigma 0.1, no actor "
                     "gradient clipping; for --runtime inline, the check that distrl's DPG learns as TD3 does "
                     "(bench/results/td3-check-HalfCheetah-v5.jsonl)", {
        "actors": 1, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "eval_every": 5000, "eval_episodes": 5,
        **TD3_LEARNER, "actor.random_frames": 10_000, "actor.flush_size": 1, "actor.pull_every": 1,
        "replay.capacity": 1_000_000, "replay.min_size": 10_000, "replay.sampling": "uniform",
        "replay.eviction": "fifo", "replay.samples_per_insert": 256.0, "inline.actor_steps": 1,
        "learner.gamma": 0.99, "net.actor_hidden": (400, 300), "net.critic_hidden": (400, 300),
    }),
    "apex-dpg-small": ("distrl: apex-dpg-pendulum's learning values (Adam 1e-3, batch 128, learning from "
                       "1,000 transitions, 64 samples per insert on Ray) for MuJoCo-class tasks with a few actors, "
                       "the default below 32 actors until apex-dpg-one-critic (it led on Hopper-v5 and trailed far "
                       "on HalfCheetah-v5: bench/results/continuous-Hopper-v5-seed1.jsonl and "
                       "continuous-HalfCheetah-v5-seed1.jsonl; docs/notes/benchmarks.md, issue 22); 1M frames, "
                       "evaluated every 2,500 updates", {
        "actors": 2, "max_frames": 1_000_000, "log_every_s": 10.0, "checkpoint_every": 5000,
        "eval_every": 2500, "eval_episodes": 5,
        "actor.pull_every": 50, "actor.flush_size": 25,
        "replay.min_size": 1_000,
        "learner.lr": 1e-3, "learner.batch_size": 128,
        "inline.actor_steps": 4,  # 64 samples per insert: 4 batches of 128 per inline round
        "replay.samples_per_insert": 64.0, "ray.steps_per_call": 50, "ray.publish_every": 4,
    }),
    "apex-dpg-td3-learner": ("distrl: Ape-X's distributed acting and prioritized replay around "
                             "TD3's learner (Fujimoto et al. 2018) for a few actors: twin critics, target smoothing "
                             "0.2 clipped at 0.5, policy delay 2, Polyak 0.005, n=1, exploration sigma 0.1, ReLU "
                             "256-256 networks with the action at the critic's input, Adam 1e-3 (torch's fused "
                             "kernel), batch 256; prioritized replay (0.6/0.4) with prioritized eviction, 32 samples "
                             "per insert, learning from 10,000 transitions after 5,000 random frames per actor. "
                             "In 20-minute races (bench/results/continuous-{HalfCheetah,Hopper}-v5-seed1.jsonl) "
                             "ahead of SB3's TD3 on HalfCheetah-v5; on Hopper-v5 as slow as TD3 itself, where "
                             "apex-dpg-small is far ahead. 1M frames, evaluated every 2,500 updates", {
        **TD3_LEARNER_IN_APEX,
    }),
    "apex-dpg-one-critic": ("distrl: the default below 32 actors from 2026-11-27 until "
                            "apex-dpg-twin-critics. "
                            "apex-dpg-td3-learner with one critic, no target smoothing and no "
                            "policy delay (TD3's Polyak 0.005, n=1, sigma 0.1, ReLU 256-256, batch 256 kept), 2 actors "
                            "on Ray with prioritized replay at 32 samples per insert; evaluated every 1,000 updates. "
                            "docs/notes/benchmarks.md (issue 33), bench/results/continuous-*.jsonl: at 20 minutes on "
                            "2 cores above SB3's TD3 and SAC on HalfCheetah-v5 (seeds 1-3) and Walker2d-v5 (seed 1); "
                            "on Hopper-v5 below SAC on seeds 1 and 2 (seed 2 raced every contender in one "
                            "session); below both on Ant-v5 (nobody passed standing still)", {
        **TD3_LEARNER_IN_APEX,
        "eval_every": 1000,
        "learner.twin_critics": False, "learner.target_noise": 0.0, "learner.policy_delay": 1,
    }),
    "apex-dpg-twin-critics": ("distrl: the default below 32 actors on the evening of 2026-11-27, "
                              "and what apex-dpg-twin-critics-bf16 runs where the learner has no bf16 units. "
                              "apex-dpg-one-critic with TD3's twin critics back (clipped "
                              "double Q; still no target smoothing and no policy delay), 2 actors on Ray with "
                              "prioritized replay at 32 samples per insert, evaluated every 1,000 updates. "
                              "docs/notes/benchmarks.md (issue 33), 20 minutes on 2 cores, seeds 1-3: above SB3's TD3 "
                              "on HalfCheetah-v5 and above SAC on Hopper-v5, where apex-dpg-one-critic fell behind; "
                              "Walker2d-v5 (seed 1) above TD3 (bench/results/continuous-*.jsonl and the seed-2 "
                              "dpg-ablation files). The second critic slows the learner's updates; Hopper's "
                              "evaluations still swing", {**TWIN_CRITICS}),
    "apex-dpg-twin-critics-bf16": ("distrl: the default below 32 actors on MuJoCo-class tasks. "
                                   "apex-dpg-twin-critics with learner.bf16: the hidden layers in bfloat16 where "
                                   "the learner's device has the units (AVX512-BF16 or AMX on a CPU), float32 "
                                   "elsewhere, and so apex-dpg-twin-critics exactly. docs/notes/benchmarks.md (issue "
                                   "33), 20 minutes on 2 cores with AVX512-BF16, seeds 1-3: on Hopper-v5 (against "
                                   "SAC) and HalfCheetah-v5 (against TD3) it passed the better peer's 20-minute score "
                                   "in a fraction of that peer's time; above TD3 on Walker2d-v5 and SAC on Ant-v5 "
                                   "(seed 1); more learner updates/s than float32 (bench/results/continuous-*.jsonl, "
                                   "the distrl-apex-dpg-twin-critics-bf16 rows)", {
        **TWIN_CRITICS, "learner.bf16": True}),
}


def choose_preset(env_id: str, algo: str, actors: int | None) -> tuple[str, str]:
    """Ape-X DPG's preset follows the run's scale (its actor count: the paper's values need 64 actors and
    many millions of frames), on every env but Pendulum."""
    if env_id.startswith("Pendulum"):
        return "apex-dpg-pendulum", "the default for Pendulum"
    if actors is not None and actors >= PAPER_SCALE_ACTORS:
        return "apex-dpg-mujoco", f"{actors} actors: the paper's values"
    n = PRESETS[DPG_DEFAULT][1]["actors"] if actors is None else actors
    return DPG_DEFAULT, (f"{n} actors; the paper's values are apex-dpg-mujoco (chosen from "
                         f"{PAPER_SCALE_ACTORS} actors, or with --preset apex-dpg-mujoco)")
