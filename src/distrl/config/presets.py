"""Named hyperparameters with their sources (`distrl presets`), the evaluation protocols, and which
preset a run gets when none is named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Evaluation protocols (every one: up to 30 no-op starts on Atari, unclipped game scores). Human starts
# cannot be offered: the papers' start states were never published.
EVAL_PROTOCOLS: dict[str, dict[str, Any]] = {
    "apex": {"eval_epsilon": 0.001, "eval_max_frames": 108_000},  # Ape-X: 30 minutes of play per episode
    "dqn": {"eval_epsilon": 0.05, "eval_episodes": 30, "eval_max_frames": 18_000},  # DQN and Gorila: 5 minutes
}


# The registry's tables, filled by distrl.architectures (each package's presets, and the user's through
# register_architecture): name -> (architecture, source, values over the config's defaults); and an
# architecture's own rule for the preset a run gets, where the env's kind alone does not say.
PRESETS: dict[str, tuple[str, str, dict[str, Any]]] = {}
PresetRule = Callable[[str, str, "int | None"], "tuple[str, str] | None"]
PRESET_RULES: dict[str, PresetRule] = {}


def choose_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> tuple[str, str]:
    """The preset a run gets when none is named, and why (the first line `distrl train` prints): the
    architecture's own rule first (Ape-X DPG's scale, A3C's algorithms), then the env's kind: the paper's
    values on Atari, MinAtar's on MinAtar, small ones elsewhere. An architecture registered without
    those presets gets its first."""
    rule = PRESET_RULES.get(architecture)
    name, why = (rule(env_id, algo, actors) if rule else None) or by_env(architecture, env_id)
    if name not in PRESETS:
        own = [p for p, (arch, _, _) in PRESETS.items() if arch == architecture]
        if own:
            return own[0], "the first preset registered with it"
    return name, why


def by_env(architecture: str, env_id: str) -> tuple[str, str]:
    from distrl.envs import is_atari, is_minatar
    if is_minatar(env_id):
        return f"{architecture}-minatar", "the default for MinAtar ids"
    if is_atari(env_id):
        return f"{architecture}-atari", "the paper's values, the default for Atari ids"
    return (f"{architecture}-cartpole",
            f"small-run values, the default for non-Atari ids; the paper's are {architecture}-atari")


def default_preset(architecture: str, env_id: str, algo: str = "", actors: int | None = None) -> str:
    return choose_preset(architecture, env_id, algo, actors)[0]


def learning_start_frames(cfg: Any) -> int:
    """Env frames before the first learner update, at the earliest: the replay start of a replay-based
    learner (its config's replay_start_steps) in env frames."""
    from distrl.envs import is_atari
    return cfg.replay_start_steps() * (4 if is_atari(cfg.env) else 1)


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
