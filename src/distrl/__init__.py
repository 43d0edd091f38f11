"""distrl: distributed deep RL (Gorila, A3C, BA3C, Ape-X) from one small set of components."""

__version__ = "0.1.0"
