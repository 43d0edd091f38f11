"""distrl's benchmarks, run as modules from the repository root (bench/README.md)."""
