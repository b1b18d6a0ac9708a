"""A process's share of a global batch in micro-batches, for gradient accumulation.

With ``elastic=dict(global_batch_size=G, micro_batch_size=m)`` one item of the train loader is
one process's whole share of a global batch, collated as ``k`` micro-batches
(:class:`MicroBatches`, a list); the train loop puts each through ``train_step`` and the
optimizer wrapper steps after the last. One loader item per global batch keeps the loader's
length, the loop's iteration and the sampler's position counted in global batches.

Example:
    >>> collate = MicroBatchCollate(list, micro_steps=2)
    >>> collate([1, 2, 3, 4])
    [[1, 2], [3, 4]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .elastic_plan import split_sizes


class MicroBatches(list):
    """The micro-batches of one training step (each one collated by the loader's
    ``collate_fn``)."""


class MicroBatchCollate:
    """Splits a process's samples of one step into ``micro_steps`` parts (equal, or one sample
    larger first where they cannot be: ``split_sizes``) and collates each with ``collate_fn``
    (runs in the DataLoader's workers)."""

    def __init__(self, collate_fn: Callable[[Sequence[Any]], Any], micro_steps: int) -> None:
        self.collate_fn = collate_fn
        self.micro_steps = micro_steps

    def __call__(self, samples: Sequence[Any]) -> MicroBatches:
        collate = self.collate_fn
        parts = MicroBatches()
        start = 0
        for size in split_sizes(len(samples), self.micro_steps):
            parts.append(collate(samples[start : start + size]))
            start += size
        return parts
