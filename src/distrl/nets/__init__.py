"""Networks. Observations arrive as uint8 (Atari) or float32 (vectors); scaling happens inside."""

from distrl.nets.actor_critic import A3CCNN, BA3CCNN, GaussianPolicyValueNet, PolicyValueNet, make_policy_value_net
from distrl.nets.q_networks import DuelingHead, MLP, NatureCNN, QNetwork, make_q_network

__all__ = ["A3CCNN", "BA3CCNN", "DuelingHead", "GaussianPolicyValueNet", "MLP", "NatureCNN", "PolicyValueNet", "QNetwork",
           "make_policy_value_net", "make_q_network"]
