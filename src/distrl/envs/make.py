"""Environment construction: one call that gives every algorithm the same, paper-faithful env.

Atari follows the classic DQN / Ape-X protocol (Mnih et al. 2015, Horgan et al. 2018):
no sticky actions (``repeat_action_probability=0``; the ALE v5 default of 0.25 is the
newer Machado et al. 2018 protocol, so scores would not be comparable to the papers),
up to 30 no-op actions on reset, action repeat 4 with a max over the last two frames,
84x84 greyscale, a stack of 4 frames, an episode cap (108,000 emulator frames = 30 min
by default). Training additionally clips rewards to [-1, 1] and flags life loss.

``info`` keys that callers rely on:

- ``info["episode"]["r"]`` / ``["l"]`` at the end of every episode (all env kinds, both
  modes): the UNCLIPPED game return and the length in agent steps.
- ``info["life_loss"]`` (Atari, train mode only; present on every step): True on the
  step where a life was lost. The learner should treat it as a terminal for
  bootstrapping; the env is NOT reset, so an episode is a whole game.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium.wrappers import (
    AtariPreprocessing,
    ClipReward,
    DtypeObservation,
    FlattenObservation,
    FrameStackObservation,
    RecordEpisodeStatistics,
    TimeLimit,
    TransformObservation,
)

from distrl.envs import partial
from distrl.errors import ConfigError
from distrl.factory import is_factory, resolve

partial.register()  # distrl/CartPoleNoVelocity-v1

MODES = ("train", "eval")
DEFAULT_MAX_EPISODE_FRAMES = 108_000  # 30 minutes at 60 Hz, the DQN evaluation cap
FRAME_SKIP = 4
_ID_EXAMPLES = "e.g. CartPole-v1, ALE/Pong-v5, PongNoFrameskip-v4"


def _register_ale() -> bool:
    """Make ``ALE/...`` and ``...NoFrameskip-v4`` ids known to Gymnasium; False if ale-py is missing."""
    try:
        import ale_py
    except ImportError:
        return False
    gymnasium.register_envs(ale_py)
    return True


def _register_minatar() -> None:
    try:
        # MinAtar logs warnings about optional plotting packages at import time.
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            import minatar.gym as minatar_gym
        finally:
            logging.disable(previous)
    except ImportError:
        raise ConfigError(
            "MinAtar ids need the minatar package (GPL-3.0, an optional extra): "
            "`pip install 'distrl[minatar]'` or `pip install minatar`"
        ) from None
    # Gymnasium 1.x no longer loads env plugins, so register by hand (once).
    if "MinAtar/Breakout-v1" not in gymnasium.registry:
        minatar_gym.register_envs()


def is_minatar(env_id: str) -> bool:
    """True for MinAtar ids (``MinAtar/Breakout-v1``): 10x10 frames, one frame per agent step."""
    return env_id.startswith("MinAtar/")


def is_dm_control(env_id: str) -> bool:
    """True for DeepMind Control Suite ids as Shimmy registers them (``dm_control/walker-walk-v0``)."""
    return env_id.startswith("dm_control/")


def is_atari(env_id: str) -> bool:
    """True for Atari ids (``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``Pong-v4``)."""
    if is_factory(env_id):
        return False  # a user's factory gets the generic treatment, whatever it builds
    if _register_ale() and env_id in gymnasium.registry:
        return "ale_py" in str(gymnasium.registry[env_id].entry_point)
    return env_id.startswith("ALE/") or bool(re.fullmatch(r"[A-Za-z]+NoFrameskip-v4", env_id))


def continuous_actions(env_id: str) -> bool:
    """True when the env's actions are a Box (continuous control); builds the env once to see."""
    if is_atari(env_id) or is_minatar(env_id):
        return False
    env = _make_other(env_id)
    try:
        return isinstance(env.action_space, gymnasium.spaces.Box)
    finally:
        env.close()


class _LifeLossInfo(gymnasium.Wrapper):
    """Adds ``info["life_loss"]`` so a learner can bootstrap as if terminal while the game goes on.

    Gymnasium's ``terminal_on_life_loss`` would end the episode instead, which turns one
    game into several episodes and breaks the whole-game returns used for evaluation.
    """

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        self._lives = 0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._lives = self._read_lives(info)
        info["life_loss"] = False
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        lives = self._read_lives(info)
        info["life_loss"] = lives < self._lives
        self._lives = lives
        return obs, reward, terminated, truncated, info

    def _read_lives(self, info: dict[str, Any]) -> int:
        if "lives" in info:
            return int(info["lives"])
        return int(self.env.unwrapped.ale.lives())  # type: ignore[attr-defined]  # ale-py's AtariEnv, untyped


class _SeedOnFirstReset(gymnasium.Wrapper):
    """Uses the seed given to ``make_env`` at the first ``reset()`` so ``make_env(id, seed=s).reset()`` is reproducible."""

    def __init__(self, env: gymnasium.Env, seed: int):
        super().__init__(env)
        self._pending_seed: int | None = seed
        self.action_space.seed(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None:
            seed = self._pending_seed
        self._pending_seed = None
        return self.env.reset(seed=seed, options=options)


def _gym_make(env_id: str, **kwargs) -> gymnasium.Env:
    if is_factory(env_id):
        return _from_factory(env_id)
    try:
        return gymnasium.make(env_id, **kwargs)
    except ModuleNotFoundError as e:  # "my_pkg.envs:Maze-v0", Gymnasium's form for a user's package
        module = env_id.partition(":")[0]
        raise ConfigError(f"env id {env_id!r}: cannot import module {module!r} ({str(e).split('. ')[0]}); install "
                          "the package that registers the env, or fix the module part of the id (module:EnvName)") \
            from None
    except gymnasium.error.DependencyNotInstalled as e:
        # Gymnasium's own message already names the pip command.
        raise ConfigError(f"env id {env_id!r} needs a package that is not installed: {str(e).splitlines()[0]}") from None
    except gymnasium.error.Error as e:
        hint = str(e).splitlines()[0] if str(e) else type(e).__name__
        if env_id.startswith("ALE/") or env_id.endswith("NoFrameskip-v4"):
            raise ConfigError(
                f"unknown Atari env id {env_id!r} ({hint}); use a registered ALE game, "
                f"e.g. ALE/Pong-v5, ALE/Breakout-v5, PongNoFrameskip-v4 (list: `gymnasium.pprint_registry()`)"
            ) from None
        raise ConfigError(
            f"unknown env id {env_id!r} ({hint}): not a registered Gymnasium id; "
            f"see `gymnasium.pprint_registry()`, {_ID_EXAMPLES}"
        ) from None


def _from_factory(env_id: str) -> gymnasium.Env:
    """A user's env factory, called with no arguments; what it returns must be a Gymnasium env."""
    factory = resolve(env_id, "env")
    env = factory()
    if not isinstance(env, gymnasium.Env):
        raise ConfigError(f"env factory {env_id[len('factory:'):]} returned {type(env).__name__}, not a "
                          "gymnasium.Env: return an env (wrap other APIs with Gymnasium's compatibility wrappers)")
    return env


# Module-level (not lambdas) so wrapped envs stay picklable.
def _as_uint8(obs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(obs, dtype=np.uint8).reshape(shape)


def _channels_first_uint8(obs: np.ndarray) -> np.ndarray:
    """MinAtar gives (10, 10, C) bools; the nets take channel-first uint8 like Atari."""
    return np.ascontiguousarray(np.moveaxis(np.asarray(obs, dtype=np.uint8), -1, 0))


def _make_atari(env_id: str, mode: str, max_episode_frames: int, noop_max: int, frame_stack: int,
                render: dict[str, str], clip_rewards: bool = True, screen_size: int = 84) -> gymnasium.Env:
    # The cap is applied below in agent steps; switch off ALE's own 108k-frame cap so a
    # longer user cap is honoured (0 = no limit in ALE).
    env = _gym_make(env_id, frameskip=1, repeat_action_probability=0.0, max_num_frames_per_episode=0, **render)
    env = AtariPreprocessing(
        env,
        noop_max=noop_max,
        frame_skip=FRAME_SKIP,
        screen_size=screen_size,
        terminal_on_life_loss=False,
        grayscale_obs=True,
        scale_obs=False,
    )
    env = TimeLimit(env, max_episode_steps=max(1, max_episode_frames // FRAME_SKIP))
    # Inside the clipping wrapper, so "r" is the raw game score.
    env = RecordEpisodeStatistics(env)
    env = FrameStackObservation(env, frame_stack)
    space = env.observation_space
    if space.shape != (frame_stack, screen_size, screen_size) or space.dtype != np.uint8:
        # Should not happen with Gymnasium >= 1.0; convert rather than feed the nets garbage.
        shape = (frame_stack, screen_size, screen_size)
        env = TransformObservation(
            env, functools.partial(_as_uint8, shape=shape), gymnasium.spaces.Box(0, 255, shape, np.uint8)
        )
    if mode == "train":
        env = _LifeLossInfo(env)
        if clip_rewards:
            env = ClipReward(env, -1.0, 1.0)
    return env


class _Seed32(gymnasium.Wrapper):
    """MinAtar and dm_control seed numpy's legacy RandomState, which takes only 32-bit seeds; distrl
    derives wider ones (seed * 1000 + env index), so a wider seed is hashed to 32 bits (SeedSequence) first."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None and not 0 <= seed < 2**32:
            seed = int(np.random.SeedSequence(abs(seed)).generate_state(1)[0])
        return self.env.reset(seed=seed, options=options)


# A colour per MinAtar channel (10 at most, Seaquest's), on black where no channel is set.
_MINATAR_PALETTE = np.array([(0, 0, 0), (230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
                             (145, 30, 180), (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212)], np.uint8)
MINATAR_PIXELS = 16  # screen pixels per MinAtar cell: 160x160 frames, a size video codecs take as it is


class _MinAtarFrames(gymnasium.Wrapper):
    """RGB frames of a MinAtar state for videos. MinAtar's own rgb_array needs seaborn and gives 10x10
    float frames, which video encoders refuse; this draws each cell as a block of MINATAR_PIXELS."""

    @property
    def render_mode(self) -> str:  # type: ignore[override]  # gymnasium's is a plain attribute; here always rgb_array
        return "rgb_array"

    def render(self) -> np.ndarray:
        game = self.env.unwrapped.game  # type: ignore[attr-defined]  # MinAtar's env, untyped
        state = np.asarray(game.state(), dtype=np.uint8)  # (10, 10, channels)
        frame = _MINATAR_PALETTE[np.amax(state * np.arange(1, state.shape[-1] + 1), -1)]  # the last channel set
        return np.repeat(np.repeat(frame, MINATAR_PIXELS, 0), MINATAR_PIXELS, 1)


def _make_minatar(env_id: str, render: dict[str, str]) -> gymnasium.Env:
    _register_minatar()
    env = _gym_make(env_id)
    env = RecordEpisodeStatistics(_Seed32(_MinAtarFrames(env) if render else env))
    h, w, c = cast(tuple[int, int, int], env.observation_space.shape)  # MinAtar's (10, 10, channels)
    return TransformObservation(env, _channels_first_uint8, gymnasium.spaces.Box(0, 1, (c, h, w), np.uint8))


def _make_dm_control(env_id: str, render: dict[str, str]) -> gymnasium.Env:
    """A DeepMind Control task through Shimmy's Gymnasium bindings, its dict of observations flattened
    into one float32 vector, in the order of its Dict space."""
    try:
        import shimmy
    except ImportError:
        raise ConfigError(f"DeepMind Control ids such as {env_id!r} need dm_control and shimmy (an optional "
                          "extra): `pip install 'distrl[dmc]'`") from None
    gymnasium.register_envs(shimmy)
    return DtypeObservation(FlattenObservation(RecordEpisodeStatistics(_Seed32(_gym_make(env_id, **render)))),
                            np.float32)


def _make_other(env_id: str, render: dict[str, str] | None = None) -> gymnasium.Env:
    if is_dm_control(env_id):
        return _make_dm_control(env_id, render or {})
    env: gymnasium.Env = RecordEpisodeStatistics(_gym_make(env_id, **(render or {})))
    space = env.observation_space
    if isinstance(space, gymnasium.spaces.Box) and space.dtype != np.float32:
        env = DtypeObservation(env, np.float32)
    return env


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ConfigError(f"unknown env mode {mode!r}: use 'train' or 'eval'")


def check_screen_size(screen_size: int) -> None:
    if not isinstance(screen_size, int) or isinstance(screen_size, bool) or screen_size < 1:
        raise ConfigError(f"screen_size must be an int >= 1 (pixels a side), got {screen_size!r}; the DQN protocol "
                          f"uses 84")


class EnvList(list):
    """Gymnasium envs stepped one after another, each started again as it ends: what envs/atari_vector.py's
    AtariVector does for K Atari games in C++, for any env, so an actor steps either the same way."""

    def reset_each(self) -> list[np.ndarray]:
        return [env.reset()[0] for env in self]

    def step_each(self, actions: Sequence[Any]) -> tuple[list[tuple], dict[int, np.ndarray]]:
        """Each env's (next_obs, reward, terminated, truncated, info), and the first observation of each env
        that ended and started again, by index."""
        results, starts = [], {}
        for j, (env, action) in enumerate(zip(self, actions, strict=True)):
            results.append(out := env.step(action))
            if out[2] or out[3]:
                starts[j] = env.reset()[0]
        return results, starts

    def close(self) -> None:
        for env in self:
            env.close()


def make_env(
    env_id: str,
    mode: str = "train",
    seed: int | None = None,
    *,
    max_episode_frames: int | None = None,
    noop_max: int = 30,
    frame_stack: int = 4,
    render_mode: str | None = None,
    clip_rewards: bool = True,
    screen_size: int = 84,
) -> gymnasium.Env:
    """Build ``env_id`` with the preprocessing every algorithm in distrl expects.

    ``mode="train"`` vs ``"eval"`` only differs for Atari (reward clipping and the
    life-loss flag are training aids; evaluation reports raw game scores); ``clip_rewards=False`` keeps
    training's rewards raw too (R2D2 rescales values instead).
    ``max_episode_frames`` caps Atari episodes in emulator frames (default 108,000; the
    cap is ``max_episode_frames // 4`` agent steps). Non-Atari envs keep their own
    registered TimeLimit and ignore it, so a caller may pass one value for every env.
    ``seed`` seeds the env at the first ``reset()`` and the action space.
    ``screen_size`` is the side of Atari's square greyscale frames: the papers' 84, or smaller (42, as
    universe-starter-agent's A3C took on CPUs) for a cheaper network; other envs ignore it.
    ``render_mode="rgb_array"`` makes ``render()`` give the frame a video records (Atari's full colour
    screen, MinAtar's cells drawn large); a user's env factory renders as its factory made it.
    """
    check_mode(mode)
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(f"env id must be a non-empty string, got {env_id!r}; {_ID_EXAMPLES}")
    if max_episode_frames is not None and (not isinstance(max_episode_frames, int) or max_episode_frames < FRAME_SKIP):
        raise ConfigError(
            f"max_episode_frames must be an int >= {FRAME_SKIP} (emulator frames), got {max_episode_frames!r}; "
            f"e.g. 108000 (30 min) or 50000"
        )
    if not isinstance(noop_max, int) or noop_max < 0:
        raise ConfigError(f"noop_max must be an int >= 0, got {noop_max!r}; the DQN protocol uses 30")
    if not isinstance(frame_stack, int) or frame_stack < 1:
        raise ConfigError(f"frame_stack must be an int >= 1, got {frame_stack!r}; the DQN protocol uses 4")
    check_screen_size(screen_size)
    if render_mode not in (None, "rgb_array"):
        raise ConfigError(f"render_mode must be None or 'rgb_array' (frames for videos), got {render_mode!r}")
    render = {"render_mode": render_mode} if render_mode and not is_factory(env_id) else {}

    if is_minatar(env_id):
        env = _make_minatar(env_id, render)
    elif is_atari(env_id):
        if not _register_ale():
            raise ConfigError(f"Atari id {env_id!r} needs ale-py: `pip install ale-py` (it ships the ROMs)")
        frames = DEFAULT_MAX_EPISODE_FRAMES if max_episode_frames is None else max_episode_frames
        env = _make_atari(env_id, mode, frames, noop_max, frame_stack, render, clip_rewards, screen_size)
    else:
        env = _make_other(env_id, render)

    if seed is not None:
        env = _SeedOnFirstReset(env, seed)
    return env
