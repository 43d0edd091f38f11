"""distrl: distributed deep RL (Gorila, A3C, BA3C, Ape-X) from one small set of components.

    import distrl
    summary = distrl.train("apex", "CartPole-v1", max_frames=60_000)
    policy = distrl.load_policy(summary["run_dir"])
    action = policy.act(observation)

`train`, `resume`, `load_policy`, `evaluate`, `export` and `sweep` are in distrl/api.py; they load torch on first use, so `import distrl`
stays quick."""

from distrl import architectures  # noqa: F401  (the registry: it fills distrl.config's tables from the packages)
from distrl.errors import CheckpointError, ConfigError, DistrlError

__version__ = "0.1.0"
__all__ = ["CheckpointError", "ConfigError", "DistrlError", "__version__", "evaluate", "export", "load_policy",
           "resume", "sweep", "train"]


def __getattr__(name: str):
    if name in ("train", "resume", "load_policy", "evaluate", "export", "sweep"):
        from distrl import api
        return getattr(api, name)
    raise AttributeError(f"module 'distrl' has no attribute {name!r}")
