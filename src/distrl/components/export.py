"""A trained policy as a file that runs where distrl is not installed: TorchScript (torch alone) or ONNX
(onnxruntime alone). The observation goes in as the env returns it after distrl's wrappers (uint8 frame
stacks for Atari, channel-first frames for MinAtar, vectors otherwise); the greedy action comes out. A
JSON file beside it states those wrappers, so a user can rebuild the observation without distrl."""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path
from typing import Any, Protocol, cast

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from distrl.components.policy import Policy

FORMATS = {"torchscript": ".pt", "onnx": ".onnx"}


class _Recurrent(Protocol):
    """A recurrent net (an LSTM PolicyValueNet, R2D2's RecurrentQNetwork): its zero state (h, c)."""

    def initial_state(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]: ...


class Greedy(nn.Module):
    """Policy's greedy rule as a graph: argmax of Q-values or logits, a Gaussian's mean, DPG's actor."""

    def __init__(self, net: nn.Module, kind: str):
        super().__init__()
        self.kind = kind
        self.net = cast(nn.ModuleDict, net)["actor"] if kind == "deterministic" else net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.kind in ("deterministic", "q"):
            out = self.net(obs)
        else:  # softmax and gaussian nets return a tuple: logits or the mean first
            out = self.net(obs)[0]
        return cast(torch.Tensor, out if self.kind in ("deterministic", "gaussian") else out.argmax(dim=1))


class GreedyRecurrent(nn.Module):
    """An LSTM policy: (obs, h, c) -> (action, h, c). Zeros for h and c start an episode."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor, h: torch.Tensor, c: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, _, (h, c) = self.net(obs, (h, c))
        return logits.argmax(dim=1), h, c


class GreedyRecurrentQ(nn.Module):
    """R2D2's recurrent Q-network, one step: (obs, previous action, previous reward, h, c) -> (action, h, c).
    An episode starts from zeros for all four."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor, prev_action: torch.Tensor, prev_reward: torch.Tensor, h: torch.Tensor,
                c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, (h, c) = self.net(obs[None], prev_action[None], prev_reward[None], (h, c))
        return q[0].argmax(dim=1), h, c


def export_policy(policy: Policy, env: gym.Env, env_id: str, fmt: str, out: Path, about: dict[str, Any]) -> Path:
    """Write `policy` to `out` in `fmt`, and its description to `out` with `.json`; returns that JSON's path."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
    net = policy.net.eval()
    recurrent_q = policy.kind == "recurrent_q"
    recurrent = recurrent_q or (policy.kind == "softmax" and getattr(net, "lstm", None) is not None)
    module = GreedyRecurrentQ(net) if recurrent_q else GreedyRecurrent(net) if recurrent else Greedy(net, policy.kind)
    module.requires_grad_(False).eval()  # the file's outputs are plain arrays: no autograd where it runs
    space = env.observation_space
    space.seed(0)
    # two observations: torch.export fixes a dimension of size 1, and the batch must stay free
    obs = torch.as_tensor(np.stack([space.sample() for _ in range(2)]).astype(space.dtype))
    names = ["obs", "prev_action", "prev_reward", "h", "c"] if recurrent_q else ["obs", "h", "c"] if recurrent else ["obs"]
    inputs: tuple[torch.Tensor, ...] = (obs,)
    if recurrent:
        h, c = cast(_Recurrent, net).initial_state(2)
        previous = (torch.zeros(2, dtype=torch.long), torch.zeros(2)) if recurrent_q else ()
        inputs = (obs, *previous, h, c)
    outputs = ["action", "h_out", "c_out"] if recurrent else ["action"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        if fmt == "torchscript":  # torch marks TorchScript deprecated; it still runs where only torch is
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                torch.jit.trace(module, inputs, check_trace=False).save(str(out))
        else:
            batch = torch.export.Dim("batch")
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                # the exporter reports each of its passes, and that the inputs share one batch axis
                warnings.filterwarnings("ignore", message=".*axis name")
                torch.onnx.export(module, inputs, str(out), input_names=names, output_names=outputs,
                                  dynamic_shapes=tuple({1 if recurrent_q and i >= 3 else 0: batch}
                                                       for i in range(len(inputs))), dynamo=True)  # R2D2's h, c: [1, B, H]
    meta = {"format": fmt, "file": out.name, **about, "env": env_id,
            "observation": {"shape": list(cast(tuple[int, ...], space.shape)), "dtype": str(space.dtype),
                            "preprocessing": wrappers(env)},
            "action": action_space(env.action_space), "inputs": names, "outputs": outputs,
            "recurrent": recurrent,
            "state_shape": list(cast(_Recurrent, net).initial_state(1)[0].shape[1:]) if recurrent else None,
            "usage": usage(fmt, recurrent, recurrent_q)}
    path = out.with_suffix(out.suffix + ".json")
    path.write_text(json.dumps(meta, indent=2))
    return path


def wrappers(env: gym.Env) -> list[dict[str, Any]]:
    """The Gymnasium id's make() arguments and the wrappers distrl put around it, in order, as Gymnasium
    records them (env.spec), their arguments made JSON: what turns the raw env's observation into the input."""
    spec = env.spec
    if spec is None:
        return []
    made = [{"name": "gymnasium.make", "kwargs": {"id": spec.id, **jsonable(spec.kwargs)}}]
    return made + [{"name": w.name, "kwargs": jsonable(w.kwargs or {})} for w in spec.additional_wrappers
                   if not w.name.startswith("_")]  # distrl's private seeding wrappers change no observation


def jsonable(kwargs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if isinstance(value, (bool, int, float, str, type(None))):
            out[key] = value
        elif isinstance(value, (list, tuple)):
            out[key] = [v if isinstance(v, (bool, int, float, str)) else repr(v) for v in value]
        elif callable(value) and hasattr(value, "__qualname__"):
            out[key] = f"{getattr(value, '__module__', '')}.{value.__qualname__}"
        else:
            out[key] = repr(value)
    return out


def action_space(space: gym.Space[Any]) -> dict[str, Any]:
    if isinstance(space, gym.spaces.Discrete):
        return {"type": "discrete", "n": int(space.n), "dtype": "int64"}
    box = cast(gym.spaces.Box, space)  # Discrete or Box: the action spaces distrl trains with
    return {"type": "box", "shape": list(box.shape), "low": np.asarray(box.low).tolist(),
            "high": np.asarray(box.high).tolist(), "dtype": "float32"}


def usage(fmt: str, recurrent: bool, recurrent_q: bool = False) -> str:
    call = ("action, h, c = run(obs[None], prev_action[None], prev_reward[None], h, c)" if recurrent_q
            else "action, h, c = run(obs[None], h, c)" if recurrent else "action = run(obs[None])")
    if fmt == "torchscript":
        return f"import torch; policy = torch.jit.load(FILE); run = lambda *x: policy(*map(torch.as_tensor, x)); {call}"
    return ("import onnxruntime; session = onnxruntime.InferenceSession(FILE); run = lambda *x: session.run(None, "
            f"dict(zip([i.name for i in session.get_inputs()], x))); {call}")
