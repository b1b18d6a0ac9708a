"""Batches of a DataLoader without end: MMEngine's ``_InfiniteDataloaderIterator``, which its
IterBasedTrainLoop keeps as ``dataloader_iterator`` and custom loops read with
``next(self.dataloader_iterator)``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from treadle.logging import print_log


class InfiniteDataloaderIterator:
    """The batches of ``dataloader``, pass after pass: when a pass ends it logs so, moves the
    sampler to the next epoch (``set_epoch``) and starts the next pass.

    Example:
        >>> batches = InfiniteDataloaderIterator([1, 2])
        >>> [next(batches) for _ in range(3)]  # doctest: +SKIP
        [1, 2, 1]
    """

    def __init__(self, dataloader: Any) -> None:
        self._dataloader = dataloader
        self._iterator: Iterator[Any] = iter(dataloader)
        self._epoch = 0

    def __iter__(self) -> InfiniteDataloaderIterator:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._iterator)
        except StopIteration:
            pass
        print_log(
            "The dataloader is exhausted and starts again; an InfiniteSampler iterates "
            "endlessly without restarting its workers.",
            logger="current",
            level=logging.WARNING,
        )
        self._epoch += 1
        sampler = getattr(self._dataloader, "sampler", None)
        batch_sampler = getattr(self._dataloader, "batch_sampler", None)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(self._epoch)
        elif hasattr(getattr(batch_sampler, "sampler", None), "set_epoch"):
            batch_sampler.sampler.set_epoch(self._epoch)
        self._iterator = iter(self._dataloader)
        return next(self._iterator)


class LoopBatches(InfiniteDataloaderIterator):
    """The train batches of an IterBasedTrainLoop, read through the loop (``next(loop)``): a
    custom loop that reads ``next(self.dataloader_iterator)`` takes the same batches as
    ``run()``, and the loop keeps the position a checkpoint saves.

    Example:
        >>> batch = next(runner.train_loop.dataloader_iterator)  # doctest: +SKIP
    """

    def __init__(self, loop: Any) -> None:
        # No pass is opened here: the loop's iterator is the one read.
        self._loop = loop
        self._dataloader = loop.dataloader

    def __next__(self) -> Any:
        return next(self._loop)
