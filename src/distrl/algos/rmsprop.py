"""RMSProp with TensorFlow's semantics: epsilon inside the square root.

The papers' RMSProp is not torch's. Ape-X's centered RMSProp (decay 0.95, eps 1.5e-7) is TensorFlow's,
and A3C's shared RMSProp is written the same way: both divide by sqrt(v + eps), while
torch.optim.RMSprop divides by sqrt(v) + eps. For small gradients TF's step is bounded by
lr * g / sqrt(eps) (a floor of sqrt(1.5e-7) ~ 3.9e-4 on the denominator) while torch's floor is eps
itself, 2,600 times smaller, so the same hyperparameters give different optimizers."""

from __future__ import annotations

from collections.abc import Iterable

import torch


@torch.no_grad()
def rmsprop_(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, *, lr: float, decay: float,
             eps: float, grad_avg: torch.Tensor | None = None, momentum_buffer: torch.Tensor | None = None,
             momentum: float = 0.0) -> None:
    """One step in place on `param` and its statistics: centered when `grad_avg` is given, with TF's
    momentum (the buffer accumulates lr-scaled steps) when `momentum_buffer` is given.

    Every operation is in place and the step is computed in a private buffer before `param` is
    touched, so processes sharing the tensors interleave element by element (A3C's Hogwild updates)."""
    square_avg.mul_(decay).add_(grad.square().mul_(1.0 - decay))
    if grad_avg is None:
        denom = square_avg + eps
    else:
        grad_avg.mul_(decay).add_(grad, alpha=1.0 - decay)
        denom = torch.addcmul(square_avg, grad_avg, grad_avg, value=-1.0).add_(eps)
    step = torch.div(grad, denom.sqrt_(), out=denom).mul_(lr)
    if momentum_buffer is not None:
        step = momentum_buffer.mul_(momentum).add_(step)
    param.sub_(step)


class RMSProp(torch.optim.Optimizer):
    """TensorFlow's RMSProp (tf.compat.v1.train.RMSPropOptimizer) as a torch optimizer.

    `initial_ms` starts the mean square: TF 1 starts it at 1.0 (its "rms" slot uses a ones
    initializer), torch and A3C's shared store at 0.0. The state keys are torch.optim.RMSprop's, so a
    checkpoint of that optimizer still loads (with this rule from then on)."""

    def __init__(self, params: Iterable, lr: float, decay: float = 0.9, eps: float = 1e-10,
                 momentum: float = 0.0, centered: bool = False, initial_ms: float = 0.0):
        if lr < 0 or not 0 <= decay < 1 or eps < 0 or momentum < 0 or initial_ms < 0:
            raise ValueError(f"RMSProp needs lr, eps, momentum, initial_ms >= 0 and decay in [0, 1), got "
                             f"lr={lr}, decay={decay}, eps={eps}, momentum={momentum}, initial_ms={initial_ms}")
        # differentiable: torch's load_state_dict adds it to every group, so a saved state holds it too
        # and a restored optimizer's state is the saved one exactly (what a restarted shard is checked on)
        super().__init__(params, {"lr": lr, "decay": decay, "eps": eps, "momentum": momentum,
                                  "centered": centered, "initial_ms": initial_ms, "differentiable": False})

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # groups loaded from torch's RMSprop lack our hyperparameters
            for key, value in self.defaults.items():
                group.setdefault(key, value)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["square_avg"] = torch.full_like(p, group["initial_ms"], memory_format=torch.preserve_format)
                    if group["centered"]:
                        state["grad_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                rmsprop_(p, p.grad, state["square_avg"], lr=group["lr"], decay=group["decay"], eps=group["eps"],
                         grad_avg=state.get("grad_avg"), momentum_buffer=state.get("momentum_buffer"),
                         momentum=group["momentum"])
        return loss
