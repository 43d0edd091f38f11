"""The evaluation component: a frozen copy of the policy run under the evaluation protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from distrl.components.policy import Policy
from distrl.envs import evaluate
from distrl.envs.scores import human_normalized
from distrl.envs.video import Video

VIDEO_DIR = "videos"  # in the run directory


class Evaluator:
    """A greedy policy (components/policy.py) with a small epsilon (0.001 by default) on the eval env
    (no-op starts on Atari); `policy` is the Policy kind for the net's output. With `video_every` N and a
    `video_dir`, evaluations 0, N, 2N, ... record their first episode there (eval-UPDATES-episode-0.mp4).
    `together`: episodes played at once (distrl.envs.evaluate), where a core is scarce."""

    def __init__(self, env_id: str, net: nn.Module, *, episodes: int = 20, epsilon: float = 0.001,
                 seed: int = 0, max_episode_frames: int | None = None, policy: str = "q",
                 video_dir: str | Path | None = None, video_every: int = 0, together: int = 1,
                 screen_size: int = 84):
        self.env_id, self.net, self.policy = env_id, net, Policy(net, policy)
        self.episodes, self.epsilon, self.seed, self.together = episodes, epsilon, seed, together
        self.max_episode_frames, self.screen_size = max_episode_frames, screen_size
        self.video_dir, self.video_every, self.evaluations = video_dir, video_every, 0

    @classmethod
    def for_run(cls, cfg: Any, net: nn.Module, seed: int, episodes: int | None = None, *,
                epsilon: float | None = None, policy: str = "q") -> Evaluator:
        """The run's protocol from its config (episodes, epsilon, episode cap, videos); `episodes` and
        `epsilon` replace the config's where the caller decides them."""
        return cls(cfg.env, net, episodes=cfg.eval_episodes if episodes is None else episodes,
                   epsilon=cfg.eval_epsilon if epsilon is None else epsilon, seed=seed, policy=policy,
                   max_episode_frames=cfg.eval_max_frames, video_every=cfg.video_every, together=cfg.eval_together,
                   screen_size=cfg.screen_size,
                   video_dir=Path(cfg.run_dir) / VIDEO_DIR if cfg.run_dir else None)

    def evaluate(self, params: dict[str, torch.Tensor], updates: int = 0) -> dict[str, Any]:
        """One evaluation of `params` (after `updates`), recorded when the schedule says so."""
        self.net.load_state_dict(params)
        filmed = self.video_dir is not None and self.films_next()
        self.evaluations += 1
        if not filmed:
            return self.run()
        assert self.video_dir is not None  # filmed
        video = Video(self.video_dir, f"eval-{updates:09d}", episodes=1)
        return {**self.run(video), "video": str(Path(video.folder) / f"{video.prefix}-episode-0.mp4")}

    def films_next(self) -> bool:
        """Whether the next evaluation is one the schedule records (it is, where `video_dir` is set too)."""
        return self.video_every > 0 and self.evaluations % self.video_every == 0

    def run(self, video: Video | None = None) -> dict[str, Any]:
        """The protocol's episodes with the parameters the net holds (`video`: recorded there), and how far
        the net's outputs spread over their observations (`output_spread`, 0: one output everywhere)."""
        self.policy.watch()
        returns = evaluate(self.env_id, self.policy, self.episodes, epsilon=self.epsilon, seed=self.seed,
                           max_episode_frames=self.max_episode_frames, video=video, together=self.together,
                           screen_size=self.screen_size)
        mean = float(np.mean(returns)) if returns else float("nan")
        return {"returns": [float(r) for r in returns], "mean": mean,
                "std": float(np.std(returns)) if returns else float("nan"),
                "episodes": len(returns), "epsilon": self.epsilon,
                "human_normalized": human_normalized(self.env_id, mean) if returns else None,
                "output_spread": self.policy.spread()}
