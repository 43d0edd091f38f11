"""The A3C family (Mnih et al. 2016): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "a3c-atari": ("Mnih et al. 2016 (the defaults): 16 actor-learners, t_max 5, shared RMSProp "
                  "(decay 0.99, eps 0.1, eps inside the square root), lr 7e-4 annealed linearly to 0 over the "
                  "run (learner.lr_sample=loguniform draws it as the paper's sweeps did), entropy 0.01, the A3C "
                  "CNN for all four methods, a rollout's step gradients summed (Algorithm S3 accumulates them)", {}),
    "a3c-cartpole": ("distrl: A3C values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate (annealed over 200k frames it scored far lower)
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        # rewards / 10 keep the shared torso's value targets small (unscaled, A3C collapsed by 200k
        # frames on Ray); with them lr 2e-3 solved CartPole with seeds 1 and 2 (no result file)
        "learner.lr": 2e-3, "rl.reward_scale": 0.1, "net.hidden": (128,), "ray.steps_per_call": 100,
    }),
    "nstep-q-cartpole": ("distrl: n-step Q values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "learner.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 4000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-cartpole": ("distrl: one-step Q values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "learner.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-cartpole": ("distrl: one-step Sarsa values for CartPole-v1 with 2 workers", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 400_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "learner.lr": 1e-3, "net.hidden": (128,), "rl.target_update": 1000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "a3c-pendulum": ("distrl: A3C with a Gaussian policy for Pendulum-v1; entropy 0.01, not the paper's 1e-4 "
                     "(with 1e-4 the variance collapsed and the mean stuck at a bound), gamma 0.9, rewards / 8", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "actors": 2, "max_frames": 300_000, "log_every_s": 2.0, "checkpoint_every": 2000,
        "learner.lr": 1e-3, "net.hidden": (128,), "rl.entropy_beta": 0.01, "rl.gamma": 0.9,
        "rl.reward_scale": 0.125, "eval_episodes": 10,
    }),
    "a3c-minatar": ("A3C on MinAtar with 2 workers: Mnih et al. 2016's entropy 0.01, shared RMSProp (decay "
                    "0.99, eps 0.1) with the rate annealed linearly to 0 over the run, on the MinAtar network "
                    "(policy and value heads on its 128 units); distrl: lr 1e-2, the top of the paper's "
                    "LogUniform(1e-4, 1e-2) (distrl's loss is the mean over a rollout's steps where the paper sums "
                    "them; in 5-minute tuning runs on Breakout lower rates learned visibly slower), t_max 20, not "
                    "the paper's 5 (with 5, Freeway's rare crossings never outweighed the entropy term; a lower "
                    "entropy, 0.003, crossed but collapsed Breakout's policy: issue 58, "
                    "bench/results/screens-a3c-minatar-issue58.jsonl and minatar-a3c-entropy0.003-seed1.jsonl), "
                    "4.5M frames (about 30 minutes on 2 cores); docs/notes/benchmarks.md, A3C family", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "actors": 2, "max_frames": 4_500_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        # evaluations every 12,500 updates: a rollout of 20 steps makes a quarter of t_max 5's updates, so
        # this keeps the 2 minutes or so between evaluations that 50,000 gave
        "eval_every": 12_500, "eval_episodes": 10, "learner.lr": 1e-2, "learner.anneal": True,
        "rl.t_max": 20,
    }),
    "nstep-q-minatar": ("n-step Q on MinAtar with 2 workers: Mnih et al. 2016's t_max 5, shared RMSProp, "
                        "per-worker final epsilons; distrl: lr 1e-3, targets every 10k global frames, epsilon over "
                        "100k frames (the MinAtar paper's DQN anneal)", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "nstep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "learner.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "onestep-q-minatar": ("one-step Q on MinAtar with 2 workers: as nstep-q-minatar", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "onestep_q", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "learner.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
    "sarsa-minatar": ("one-step Sarsa on MinAtar with 2 workers: as nstep-q-minatar", {
        "rl.reduction": "mean",  # measured with the rollout mean; the paper sums (a3c-atari does)
        "learner.anneal": False,  # measured at a constant rate; not re-measured annealed
        "algo": "sarsa", "actors": 2, "max_frames": 5_000_000, "log_every_s": 10.0, "checkpoint_every": 10_000,
        "learner.lr": 1e-3, "rl.target_update": 10_000, "rl.epsilon_anneal_frames": 100_000,
    }),
}


def choose_preset(env_id: str, algo: str, actors: int | None) -> tuple[str, str] | None:
    """The Q methods have presets of their own on MinAtar and small envs, and continuous actions get the
    Gaussian policy's; None: the env's kind decides (config/presets.py)."""
    from distrl.envs import continuous_actions, is_atari, is_minatar
    prefix = algo.replace("_", "-") if algo in ("nstep_q", "onestep_q", "sarsa") else ""
    if is_minatar(env_id):
        return (f"{prefix}-minatar", "the default for MinAtar ids") if prefix else None
    if is_atari(env_id):
        return None
    if continuous_actions(env_id):
        return "a3c-pendulum", "the default for continuous actions (the paper's Gaussian policy, small-run values)"
    if prefix:
        return f"{prefix}-cartpole", "small-run values, the default for non-Atari ids; the paper's are a3c-atari"
    return None
