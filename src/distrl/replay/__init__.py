"""Replay: a Reverb-like table (storage + Sampler + Remover) over batches of numpy arrays."""

from distrl.replay.removers import FifoRemover, PrioritizedRemover
from distrl.replay.samplers import PrioritizedSampler, UniformSampler
from distrl.replay.sum_tree import SumTree
from distrl.replay.table import ReplayTable

__all__ = ["ReplayTable", "UniformSampler", "PrioritizedSampler", "FifoRemover", "PrioritizedRemover", "SumTree"]
