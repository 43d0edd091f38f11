"""distrl against its peers (SB3, RLlib, cpprb), run as modules from the repository root (bench/peers/README.md)."""
