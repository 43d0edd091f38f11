"""Experiment tracking beside metrics.csv and TensorBoard: Weights & Biases (`--set tracking=wandb`, the
`wandb` extra), offline in RUN_DIR/wandb when no key is set, so a run never needs the network."""

from __future__ import annotations

import math
import netrc
import os
import secrets
from pathlib import Path
from typing import Any

from distrl.errors import ConfigError

WANDB_HOST = "api.wandb.ai"
ID_FILE = "distrl-run-id"  # in RUN_DIR/wandb: a resumed run goes on in the same W&B run


def require_tracking(tracking: str) -> None:
    """Refuse a run whose tracker is not installed before it writes anything."""
    if tracking == "wandb":
        try:
            import wandb  # noqa: F401
        except ImportError:
            raise ConfigError("tracking=wandb needs the wandb package: pip install 'distrl[wandb]' (or leave "
                              "tracking unset: metrics.csv and TensorBoard are always written)") from None


def wandb_mode() -> str:
    """WANDB_MODE when the user set it; online with a key (WANDB_API_KEY or `wandb login`'s netrc
    entry); offline otherwise (`wandb sync RUN_DIR/wandb/offline-run-*` uploads it later)."""
    if os.environ.get("WANDB_MODE"):
        return os.environ["WANDB_MODE"]
    if os.environ.get("WANDB_API_KEY"):
        return "online"
    try:
        return "online" if netrc.netrc().authenticators(WANDB_HOST) else "offline"
    except (OSError, netrc.NetrcParseError):
        return "offline"


class WandbTracker:
    """One W&B run per distrl run: the config at the start, each metrics.csv row as train/COLUMN (against
    train/frames), each evaluation as eval/... (against eval/updates) with its video when one was recorded."""

    def __init__(self, run_dir: Path, config: dict[str, Any], *, resume: bool):
        import wandb

        folder = Path(run_dir) / "wandb"
        folder.mkdir(parents=True, exist_ok=True)
        id_file = folder / ID_FILE
        run_id = id_file.read_text().strip() if resume and id_file.exists() else secrets.token_hex(4)
        id_file.write_text(run_id)
        self.wandb = wandb
        self.run = wandb.init(project=os.environ.get("WANDB_PROJECT", "distrl"), dir=str(run_dir), id=run_id,
                              name=Path(run_dir).name, config=config,
                              mode=wandb_mode(),  # type: ignore[arg-type]  # WANDB_MODE as set; wandb checks it
                              resume="allow")
        for section, step in (("train", "frames"), ("eval", "updates")):
            self.run.define_metric(f"{section}/{step}")
            self.run.define_metric(f"{section}/*", step_metric=f"{section}/{step}")

    def log(self, row: dict[str, float]) -> None:
        self.run.log(numbers("train", row))

    def log_eval(self, row: dict[str, Any], video: str | None) -> None:
        data: dict[str, Any] = numbers("eval", row)
        if video is not None and Path(video).exists():
            data["eval/video"] = self.wandb.Video(video, format="mp4")
        self.run.log(data)

    def close(self) -> None:
        self.run.finish()


def numbers(section: str, row: dict[str, Any]) -> dict[str, float]:
    """The row's numeric cells under SECTION/ (eval_return_mean as eval/return_mean, as in TensorBoard;
    NaN, e.g. a mean before the first episode, left out)."""
    return {f"{section}/{k.removeprefix(section + '_')}": v for k, v in row.items()
            if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))}
