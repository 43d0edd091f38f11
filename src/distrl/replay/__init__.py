"""Replay: a Reverb-like table (storage + Sampler + Remover) over batches of numpy arrays."""

from distrl.replay.limiters import MinSize, RateLimiter, SampleToInsertRatio
from distrl.replay.removers import FifoRemover, PrioritizedRemover
from distrl.replay.samplers import PrioritizedSampler, UniformSampler
from distrl.replay.sum_tree import SumTree
from distrl.replay.table import Packed, ReplayTable, pack

__all__ = ["RateLimiter", "MinSize", "SampleToInsertRatio", "ReplayTable", "Packed", "pack", "UniformSampler", "PrioritizedSampler", "FifoRemover", "PrioritizedRemover", "SumTree"]
