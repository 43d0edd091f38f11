"""Videos of evaluation episodes: Gymnasium's RecordVideo (moviepy writes the files, the `video` extra)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import gymnasium
from gymnasium.wrappers import RecordVideo

from distrl.envs.make import FRAME_SKIP, is_atari, is_minatar, make_env
from distrl.errors import ConfigError

ATARI_HZ = 60  # the console's frame rate (ALE's metadata says 30, whatever the frame skip)
MINATAR_FPS = 10  # MinAtar states one game tick per step and no frame rate; 10 ticks a second is watchable


@dataclass(frozen=True)
class Video:
    """Where the episodes go: FOLDER/PREFIX-episode-I.mp4 for the first `episodes` (None: all of them)."""
    folder: str | Path
    prefix: str = "eval"
    episodes: int | None = None


def require_video() -> None:
    """Refuse a run or an evaluation that asks for videos before it starts, not at its first episode."""
    try:
        import moviepy  # noqa: F401  (RecordVideo imports it when it writes)
    except ImportError:
        raise ConfigError("videos need moviepy: pip install 'distrl[video]' (or leave out --video / video_every)") \
            from None


def check_renders(env_id: str) -> None:
    """Render one frame of `env_id` before a run or an evaluation counts on it: a missing renderer
    (CartPole's pygame, MuJoCo's OpenGL) is one line here, not a crashed evaluator later."""
    require_video()
    env = make_env(env_id, "eval", seed=0, render_mode="rgb_array")
    try:
        env.reset()
        frame = env.render()
    except Exception as exc:  # DependencyNotInstalled, a GL error: whatever the env's renderer raises
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"env {env_id!r} cannot render frames for videos ({first[:200]}): install what it "
                          "names (MuJoCo without a display: MUJOCO_GL=egl), or leave out --video / video_every") \
            from None
    finally:
        env.close()
    if frame is None:
        raise ConfigError(f"env {env_id!r} renders no frames (render_mode {env.render_mode!r}): a video needs an env "
                          "with render_mode='rgb_array' (an env factory must make it so)")


def record(env: gymnasium.Env, env_id: str, video: Video) -> gymnasium.Env:
    """`env` (made with render_mode="rgb_array") recording `video`, one frame per agent step, in real time."""
    require_video()
    if env.render_mode != "rgb_array":
        raise ConfigError(f"env {env_id!r} renders no frames (render_mode {env.render_mode!r}): a video needs an env "
                          "with render_mode='rgb_array' (an env factory must make it so)")
    if is_atari(env_id):
        fps = ATARI_HZ // FRAME_SKIP  # an agent step is FRAME_SKIP emulator frames
    elif is_minatar(env_id):
        fps = MINATAR_FPS
    else:
        fps = env.metadata.get("render_fps", 30)
    n = video.episodes
    with warnings.catch_warnings():  # a run's evaluations share one folder: each new name is no overwrite
        warnings.filterwarnings("ignore", message=".*Overwriting existing videos")
        return RecordVideo(env, str(video.folder), episode_trigger=lambda i: n is None or i < n,
                           name_prefix=video.prefix, fps=int(fps))
