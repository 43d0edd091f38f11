"""Networks. Observations arrive as uint8 (Atari frames 0-255, MinAtar frames 0/1) or float32 (vectors);
scaling, where there is any, happens inside."""

from distrl.nets.actor_critic import (
    A3CCNN,
    BA3CCNN,
    GaussianPolicyValueNet,
    PolicyValueNet,
    UserPolicyValue,
    make_policy_value_net,
)
from distrl.nets.normalization import ObsNorm
from distrl.nets.q_networks import MLP, DuelingHead, MinAtarCNN, NatureCNN, QNetwork, make_q_network
from distrl.nets.shapes import image_kind

__all__ = ["A3CCNN", "BA3CCNN", "DuelingHead", "GaussianPolicyValueNet", "MLP", "MinAtarCNN", "NatureCNN", "ObsNorm",
           "PolicyValueNet", "QNetwork", "UserPolicyValue", "image_kind", "make_policy_value_net", "make_q_network"]
