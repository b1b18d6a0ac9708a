"""The samplers, where ``mmengine.dataset.sampler`` has them."""

from __future__ import annotations

from .default_sampler import DefaultSampler
from .infinite_sampler import InfiniteSampler

__all__ = ["DefaultSampler", "InfiniteSampler"]
