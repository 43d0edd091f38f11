"""Distributed BA3C (Adamski et al. 2018): named values with their sources (`distrl presets`); the
config's defaults are the paper's."""

from __future__ import annotations

from typing import Any

# name -> (source, values over the config's defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "ba3c-atari": ("Adamski et al. 2018, table 1 (the defaults): 64 workers, n_sim 10, bs 32, 4 parameter "
                   "servers, Adam lr 1e-3 eps 1e-8 betas 0.8/0.75, sync with 90% of the workers, 128-unit layer", {}),
    "ba3c-cartpole": ("distrl: BA3C values for CartPole-v1 with 2 workers (rewards / 10 and lr 2e-3 solved "
                      "seeds 1-3 inline; the paper's lr 1e-3 unscaled fell short at 200k frames)", {
        "actors": 2, "max_frames": 200_000, "log_every_s": 2.0, "checkpoint_every": 500, "eval_every": 1000,
        "eval_episodes": 10, "ps.shards": 2, "net.hidden": (128,), "learner.lr": 2e-3, "rl.reward_scale": 0.1,
        # annealed: at a constant 2e-3 some chaos runs collapsed late (docs/notes/benchmarks.md, Chaos runs)
        "learner.anneal": True,
    }),
    "ba3c-minatar": ("BA3C on MinAtar with 2 workers: Adamski et al. 2018's t_max 5, Adam (betas 0.8/0.75, "
                     "eps 1e-8), sync 0.9, entropy 0.01, on the MinAtar network; distrl: n_sim 16 and bs 64 (the "
                     "paper's 10 and 32 were bound by a round's round trips on 2 cores), lr 3e-3 annealed to 0 over "
                     "the run (in short trials 5e-4, 1e-3 and 3e-3 sat on one plateau: docs/notes/benchmarks.md, "
                     "Distributed BA3C), 2 shards; 7.5M frames (about 30 minutes on 2 cores)", {
        "actors": 2, "max_frames": 7_500_000, "log_every_s": 10.0, "checkpoint_every": 2_000, "eval_every": 2_000,
        "eval_episodes": 10, "ps.shards": 2, "learner.lr": 3e-3, "learner.anneal": True,
        "worker.n_sim": 16, "worker.batch_size": 64,
    }),
}
