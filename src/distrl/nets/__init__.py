"""Networks. Observations arrive as uint8 (Atari) or float32 (vectors); scaling happens inside."""

from distrl.nets.q_networks import DuelingHead, MLP, NatureCNN, QNetwork, make_q_network

__all__ = ["DuelingHead", "MLP", "NatureCNN", "QNetwork", "make_q_network"]
