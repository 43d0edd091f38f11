"""K Atari games stepped together by ale-py's C++ vector env, giving what make_env gives each game (issue 34).

An Ape-X actor spends about 0.9 ms of Python per agent step in Gymnasium's wrapper chain (bench/acting_cost.py);
ale-py's AtariVectorEnv does the same preprocessing in C++ threads (frame skip 4 with the max of the last two
frames, grayscale, 84x84 (or `screen_size`) by area), 1.35x faster on one thread and 2.4x on two. What it does
differently is redone here, so that a game's observations, rewards and infos are make_env's:
- the frame stack is kept here (ale-py pads a new episode's stack with zeros, Gymnasium with the first frame);
- rewards are clipped here in "train" mode, and info["episode"] holds the raw return and length;
- info["life_loss"] flags a lost life (a training aid: the game goes on), also on the step a time limit cuts;
- a finished game starts again in the same step (Gymnasium's same-step autoreset): the step's observation is
  the new game's, and info["final_obs"] holds the last one of the game that ended.
The no-op starts draw from ale-py's RNG, not Gymnasium's: the same rule, another stream of numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import gymnasium
import numpy as np

from distrl.envs.make import DEFAULT_MAX_EPISODE_FRAMES, FRAME_SKIP, check_mode, check_screen_size, is_atari
from distrl.errors import ConfigError


class AtariVector:
    def __init__(self, env_id: str, num_envs: int, *, mode: str = "train", seed: int = 0,
                 max_episode_frames: int | None = None, noop_max: int = 30, frame_stack: int = 4,
                 clip_rewards: bool = True, threads: int = 1, screen_size: int = 84):
        if not is_atari(env_id):
            raise ConfigError(f"AtariVector steps Atari games; {env_id!r} is not one (use make_env for it)")
        check_mode(mode)
        check_screen_size(screen_size)
        from ale_py.vector_env import AtariVectorEnv  # here: importing ale-py prints its banner

        game = gymnasium.spec(env_id).kwargs.get("game")
        if game is None:
            raise ConfigError(f"{env_id!r} names no ALE game in its registration; use an id such as ALE/Pong-v5")
        # game j is seeded with seed + j, as make_env(seed=seed + j) would be; ale-py takes 31-bit seeds
        self.num_envs, self.frame_stack, self.seed = num_envs, frame_stack, int(seed) % (2**31 - num_envs)
        self.train = mode == "train"
        self.clip = self.train and clip_rewards
        self._vec = AtariVectorEnv(
            game, num_envs, num_threads=threads, stack_num=1, frameskip=FRAME_SKIP, maxpool=True, grayscale=True,
            img_height=screen_size, img_width=screen_size, noop_max=noop_max, repeat_action_probability=0.0,
            max_num_frames_per_episode=2**30, episodic_life=False, reward_clipping=False, use_fire_reset=False,
            autoreset_mode="SameStep")  # the cap is counted here, in agent steps, as make_env's TimeLimit does
        frames = DEFAULT_MAX_EPISODE_FRAMES if max_episode_frames is None else max_episode_frames
        self.max_steps = max(1, frames // FRAME_SKIP)
        self.num_actions = int(cast(gymnasium.spaces.Discrete, self._vec.single_action_space).n)
        self._stacks = np.zeros((num_envs, frame_stack, screen_size, screen_size), np.uint8)
        self._lives = np.zeros(num_envs, np.int64)
        self._returns = np.zeros(num_envs, np.float64)
        self._lengths = np.zeros(num_envs, np.int64)

    def reset(self) -> np.ndarray:
        """Every game from its start; [K, frame_stack, screen_size, screen_size] uint8."""
        frames, info = self._vec.reset(seed=self.seed)
        self._stacks[:] = frames  # the first frame fills the stack, as Gymnasium's FrameStackObservation does
        self._lives[:] = info["lives"]
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._stacks.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One agent step of every game: (observations, rewards, terminated, truncated, one info per game)."""
        frames, raw, terminated, truncated, info = self._vec.step(np.asarray(actions, dtype=np.int64))
        raw, terminated = np.asarray(raw, dtype=np.float64), np.asarray(terminated)
        self._returns += raw
        self._lengths += 1
        truncated = ~terminated & (self._lengths >= self.max_steps)
        done = terminated | truncated
        lives = np.asarray(info["lives"])
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if self.train:  # a lost life in a game that goes on, or that the time limit cuts here (a game's end, which
            for j in np.flatnonzero(~terminated):  # ends the bootstrap anyway, is not flagged)
                infos[j]["life_loss"] = bool(lives[j] < self._lives[j])
        for j in np.flatnonzero(done):  # a game ended by ale-py has its last frame in final_obs
            final = np.concatenate([self._stacks[j, 1:], info["final_obs"][j] if terminated[j] else frames[j]])
            infos[j].update(final_obs=final, episode={"r": float(self._returns[j]), "l": int(self._lengths[j])})
            self._returns[j], self._lengths[j] = 0.0, 0
        if truncated.any():  # cut here: these games start again now
            restarted, reset_info = self._vec.reset(options={"reset_mask": truncated})
            frames[truncated] = restarted[truncated]
            lives = np.where(truncated, reset_info["lives"], lives)
        self._stacks[:, :-1] = self._stacks[:, 1:]
        self._stacks[:, -1] = frames[:, 0]
        self._stacks[done] = frames[done]  # a new game: its first frame fills its stack
        self._lives[:] = lives
        rewards = np.clip(raw, -1.0, 1.0) if self.clip else raw
        return self._stacks.copy(), rewards.astype(np.float32), terminated, truncated, infos

    def __len__(self) -> int:
        return self.num_envs

    def reset_each(self) -> list[np.ndarray]:
        return list(self.reset())

    def step_each(self, actions: Sequence[int]) -> tuple[list[tuple], dict[int | np.integer, np.ndarray]]:
        """As envs/make.py's EnvList: each game's (next_obs, reward, terminated, truncated, info), next_obs the
        last of a game that ended, and the first observation of each game started again, by index."""
        obs, rewards, terminated, truncated, infos = self.step(np.asarray(actions))
        results = [(infos[j].get("final_obs", obs[j]), float(rewards[j]), bool(terminated[j]), bool(truncated[j]),
                    infos[j]) for j in range(self.num_envs)]
        return results, {j: obs[j] for j in np.flatnonzero(terminated | truncated)}

    def close(self) -> None:
        self._vec.close()
