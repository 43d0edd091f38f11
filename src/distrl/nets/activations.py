"""Hidden-unit nonlinearities a config may name, by name."""

from __future__ import annotations

from torch import nn

# the DPG paper's tanh; ReLU (DQN, A3C, TD3, SB3); ELU, which keeps a gradient below 0 (pytorch-a3c's and
# universe-starter-agent's A3C torso)
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU}
