"""Data loader failures that name the dataset index and the worker.

PyTorch reports a ``__getitem__`` that raised as "Caught ValueError in DataLoader worker
process 1" (no index), and a worker that died (killed by the OOM killer, a segfault in a
decoder, ``os._exit``) as "DataLoader worker (pid(s) 4242) exited unexpectedly" (no index, no
worker number). The loaders :func:`build_dataloader` makes are :class:`NamingDataLoader`: their
workers read the dataset through :class:`IndexedDataset`, which names the index, the dataset
and the worker of an exception, and writes the index it is reading in a small shared tensor
(one slot per worker), so that the main process can say which sample a dead worker was on.
That costs one integer store per sample, nothing on the training step.
"""

from __future__ import annotations

import os
import re
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info
from torch.utils.data.dataloader import (
    _MultiProcessingDataLoaderIter,
    _SingleProcessDataLoaderIter,
)

from treadle.runner.dataset.sample_seeding import SampleKey, seeded_item

_PIDS = re.compile(r"pid(?:\(s\))? ([\d, ]+)")


class DatasetItemError(RuntimeError):
    """``dataset[index]`` raised; the message names the loader, the dataset, the index and
    the worker, and the original error is chained."""


class DataLoaderWorkerError(RuntimeError):
    """A DataLoader worker process died; the message names it and the index it was reading."""


def _where_in_worker() -> str:
    info = get_worker_info()
    if info is None:
        return "the main process (num_workers=0)"
    return f"DataLoader worker {info.id} (pid {os.getpid()})"


class IndexedDataset(Dataset):
    """Reads ``dataset[index]`` for a DataLoader, naming the index of what fails.

    Example:
        >>> reader = IndexedDataset([1, 2], 'train_dataloader', torch.full((1,), -1))
        >>> reader[1]
        2
    """

    def __init__(self, dataset: Any, where: str, reading: torch.Tensor) -> None:
        self.dataset = dataset
        self.where = where
        self.reading = reading

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: Any) -> Any:
        info = get_worker_info()
        if info is not None and info.id < len(self.reading):
            self.reading[info.id] = int(index) if isinstance(index, int) else -1
        try:
            return self.dataset[index]
        except Exception as exc:
            raise self._item_error(index, exc) from exc

    def _item_error(self, index: Any, exc: Exception) -> DatasetItemError:
        return DatasetItemError(
            f"{self.where}: {type(self.dataset).__name__}[{index}] raised "
            f"{type(exc).__name__}: {exc} (in {_where_in_worker()}); the dataset index is "
            f"{index}"
        )


class KeyedIndexedDataset(IndexedDataset):
    """:class:`IndexedDataset` for an elastic sampler's keys: reads ``dataset[key.sample]``
    with per-sample randomness (:func:`~treadle.runner.dataset.sample_seeding.seeded_item`)."""

    def __getitem__(self, key: SampleKey) -> Any:
        index = key.sample
        info = get_worker_info()
        if info is not None and info.id < len(self.reading):
            self.reading[info.id] = index
        try:
            return seeded_item(self.dataset, key)
        except Exception as exc:
            raise self._item_error(index, exc) from exc


class _Single(_SingleProcessDataLoaderIter):
    pass


class _Multi(_MultiProcessingDataLoaderIter):
    def __next__(self) -> Any:
        try:
            return super().__next__()
        except RuntimeError as exc:
            if isinstance(exc, DatasetItemError) or "DataLoader worker" not in str(exc):
                raise
            raise self._worker_error(exc) from exc

    def _worker_error(self, exc: RuntimeError) -> DataLoaderWorkerError:
        loader_where, reading = self._naming
        match = _PIDS.search(str(exc))
        pids = [int(p) for p in match.group(1).replace(",", " ").split()] if match else []
        parts = []
        for worker_id, worker in enumerate(self._workers):
            if pids and worker.pid not in pids:
                continue
            if not pids and worker.is_alive():
                continue
            index = int(reading[worker_id]) if worker_id < len(reading) else -1
            status = worker.exitcode
            how = (
                f"killed by signal {-status}"
                if status is not None and status < 0
                else f"exit code {status}"
            )
            what = f"dataset index {index}" if index >= 0 else "no sample yet"
            parts.append(f"worker {worker_id} (pid {worker.pid}, {how}) while reading {what}")
        dataset = type(self._naming_dataset).__name__
        died = "; ".join(parts) or str(exc)
        return DataLoaderWorkerError(
            f"{loader_where}: a DataLoader worker died: {died} of {dataset}. A worker dies "
            f"without a Python error when the system runs out of memory (fewer num_workers or a "
            f"smaller batch_size help) or a library crashes on that sample; num_workers=0 "
            f"reads it in the main process, where the error shows"
        )


class NamingDataLoader(DataLoader):
    """A DataLoader whose errors name the dataset index and the worker (see the module).

    Example:
        >>> loader = NamingDataLoader(dataset, batch_size=2, where='train_dataloader')
        ... # doctest: +SKIP
    """

    def __init__(
        self, *args: Any, where: str = "dataloader", keyed_samples: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._where = where
        # The sampler hands out SampleKeys (elastic): each sample is read on its own, seeded.
        self._keyed_samples = keyed_samples

    def _get_iterator(self) -> Any:
        dataset = self.dataset
        keyed = self._keyed_samples
        if isinstance(dataset, IterableDataset) or (
            hasattr(type(dataset), "__getitems__") and not keyed
        ):
            return super()._get_iterator()  # no per-index reads to name
        workers = self.num_workers
        reading = torch.full((max(workers, 1),), -1, dtype=torch.long)
        if workers:
            reading.share_memory_()
        reader = (KeyedIndexedDataset if keyed else IndexedDataset)(dataset, self._where, reading)
        # The iterator reads `dataset` when made (and hands it to the workers): swap it in for
        # that moment only; `loader.dataset` stays the user's.
        self.__dict__["dataset"] = reader
        try:
            iterator = _Multi(self) if workers else _Single(self)
        finally:
            self.__dict__["dataset"] = dataset
        iterator._naming = (self._where, reading)
        iterator._naming_dataset = dataset
        return iterator
