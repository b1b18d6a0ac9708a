"""The random streams of DataLoader worker processes, so that a resume without replay is exact.

Random transforms run in the workers. Each worker draws from its own generators, seeded once
when it starts, and torch deals the batches of an iterator to the workers in turn (batch ``b``
to worker ``b % num_workers``). A resume that skips the trained batches starts fresh workers:
without help they would draw from their seeds again, not from where the interrupted run's
workers stood.

Each worker therefore writes its generator states after every batch into a small ring in
shared memory (a slot per batch it may still be asked about: no more than the DataLoader's
read-ahead). For a checkpoint, the loop asks for the states at the last *round* boundary of the
current pass (a multiple of ``num_workers`` batches): there every worker has just finished one
batch each, and worker ``w`` of a new iterator gets batch ``w`` of the next round, as in the
uninterrupted run. The resumed run starts its sampler at that boundary, hands each new worker
the state of the worker of the same number, and drops the fewer than ``num_workers`` batches
between the boundary and the checkpoint: a fixed cost, whatever the position in the pass.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, get_worker_info

from treadle.logging import print_log

from .rng_state import capture_rng_state, restore_rng_state

# Bytes of one slot: the pickled generator states of Python, NumPy and torch take ~16 KB.
_SLOT_BYTES = 32 * 1024


class _RecordingCollate:
    """The DataLoader's collate function, followed (in the worker) by writing the worker's
    generator states into its ring slot for this batch."""

    def __init__(self, collate_fn: Callable, ring: torch.Tensor, counts: torch.Tensor) -> None:
        self.collate_fn = collate_fn
        self.ring = ring
        self.counts = counts
        self.produced = 0

    def __call__(self, samples: Any) -> Any:
        batch = self.collate_fn(samples)
        info = get_worker_info()
        if info is not None:
            self._record(info.id)
        return batch

    def _record(self, worker: int) -> None:
        number = self.produced
        self.produced = number + 1
        slot = number % self.ring.shape[1]
        data = pickle.dumps(capture_rng_state(), protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > _SLOT_BYTES - 8:
            self.counts[worker, slot] = -1
            return
        # The count goes last: the main process reads a slot only when it names the batch.
        self.counts[worker, slot] = -1
        view = self.ring[worker, slot]
        view[:8] = torch.tensor([len(data)], dtype=torch.int64).view(torch.uint8)
        view[8 : 8 + len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        self.counts[worker, slot] = number


class _StartingStates:
    """The DataLoader's worker_init_fn, followed by the generator states a resumed run hands
    to each new worker (None: the worker keeps what its seeding gave)."""

    def __init__(self, worker_init_fn: Callable | None) -> None:
        self.worker_init_fn = worker_init_fn
        self.states: Sequence[Any] | None = None

    def __call__(self, worker_id: int) -> None:
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)
        states = self.states
        if states is not None and worker_id < len(states) and states[worker_id] is not None:
            restore_rng_state(states[worker_id])


class WorkerStreams:
    """Where each worker's random streams stand, for a resume that reads no trained batch.

    ``attach`` wraps a DataLoader's ``collate_fn`` and ``worker_init_fn`` (before its first
    iterator); the train loop opens iterators through :meth:`open`, asks :meth:`state` when
    a checkpoint is written and :meth:`resume_plan` when it resumes.

    Example:
        >>> loader = DataLoader(range(8), batch_size=2, num_workers=2)
        >>> streams = WorkerStreams.attach(loader)
        >>> batches = list(streams.open(loader))
        >>> streams.state()['skip']  # 4 batches: two whole rounds of two workers
        0
    """

    def __init__(self, dataloader: DataLoader) -> None:
        self.workers = int(dataloader.num_workers)
        self.persistent = bool(getattr(dataloader, "persistent_workers", False))
        depth = (dataloader.prefetch_factor or 2) + 4
        self._ring = torch.zeros(self.workers, depth, _SLOT_BYTES, dtype=torch.uint8)
        self._ring.share_memory_()
        self._counts = torch.full((self.workers, depth), -1, dtype=torch.int64)
        self._counts.share_memory_()
        self._collate = _RecordingCollate(dataloader.collate_fn, self._ring, self._counts)
        self._init = _StartingStates(dataloader.worker_init_fn)
        dataloader.collate_fn = self._collate
        dataloader.worker_init_fn = self._init
        # Batches taken from the current iterator, and each worker's batches before it began
        # (persistent workers go on counting across passes).
        self.consumed = 0
        self._before = [0] * self.workers
        self._started = False
        # The states the current worker processes started from (a resumed run's plan).
        self._initial: list[Any] = [None] * self.workers

    @classmethod
    def attach(cls, dataloader: Any) -> WorkerStreams | None:
        """Record the worker streams of ``dataloader``, or None where there is nothing to
        record or torch does not deal its batches in turn (no workers, an iterable dataset)."""
        if not isinstance(dataloader, DataLoader) or dataloader.num_workers == 0:
            return None
        if isinstance(dataloader.dataset, IterableDataset):
            return None
        return cls(dataloader)

    def open(self, dataloader: DataLoader, states: Sequence[Any] | None = None) -> Iterator[Any]:
        """A new iterator over ``dataloader`` that counts the batches taken; ``states``: the
        generator states new workers start from (a resumed run's)."""
        fresh_workers = not (self.persistent and self._started)
        if fresh_workers:
            self._before = [0] * self.workers
            self._initial = list(states) if states is not None else [None] * self.workers
            self._init.states = states
        else:
            for worker in range(self.workers):
                self._before[worker] += _share(self.consumed, worker, self.workers)
        self._started = True
        self.consumed = 0
        try:
            iterator = iter(dataloader)
        finally:
            self._init.states = None
        return self._counting(iterator)

    def _counting(self, iterator: Iterator[Any]) -> Iterator[Any]:
        for batch in iterator:
            self.consumed += 1
            yield batch

    def state(self, pass_done: bool = False) -> dict[str, Any] | None:
        """The workers' generator states at the last round boundary of the current iterator,
        and how many batches past it the loop stands (``skip``); with ``pass_done`` (the next
        state starts a new pass) the states after each worker's last batch, which persistent
        workers carry into the next pass. None when a worker's state was already overwritten
        (a resume then is not exact for random transforms)."""
        workers = self.workers
        if pass_done and not self.persistent:
            # The next pass starts new workers, seeded as in the uninterrupted run.
            return {"workers": workers, "skip": 0, "states": [None] * workers}
        skip = 0 if pass_done else self.consumed % workers
        states: list[Any] = []
        for worker in range(workers):
            if pass_done:
                number = self._before[worker] + _share(self.consumed, worker, workers) - 1
            else:
                number = self._before[worker] + self.consumed // workers - 1
            if number < 0:
                states.append(self._initial[worker])
                continue
            slot = number % self._counts.shape[1]
            if int(self._counts[worker, slot]) != number:
                return None
            row = self._ring[worker, slot]
            length = int(row[:8].view(torch.int64)[0])
            states.append(pickle.loads(row[8 : 8 + length].numpy().tobytes()))
        return {"workers": workers, "skip": skip, "states": states}


def _share(batches: int, worker: int, workers: int) -> int:
    """How many of the first ``batches`` batches of an iterator went to ``worker``."""
    return max(0, (batches - worker + workers - 1) // workers)


def resume_plan(
    streams: WorkerStreams | None, saved: Any, dataloader: Any, sampler_state: Any
) -> tuple[int, list[Any] | None]:
    """(batches to drop after the sampler's moved-back position, the workers' starting states)
    for resuming at ``saved`` (a :meth:`WorkerStreams.state`); moves ``sampler_state``'s
    position (a dict, changed in place) back to the round boundary. (0, None) when the saved
    states cannot be used."""
    if streams is None or not isinstance(saved, dict):
        return 0, None
    if saved.get("workers") != streams.workers:
        print_log(
            f"the checkpoint was written with {saved.get('workers')} train DataLoader workers "
            f"and this run has {streams.workers}: random transforms in the workers draw "
            f"numbers other than the interrupted run's",
            logger="current",
            level=logging.WARNING,
        )
        return 0, None
    skip = int(saved.get("skip", 0))
    if skip:
        batch_sampler = getattr(dataloader, "batch_sampler", None)
        plain = batch_sampler is not None and type(batch_sampler).__iter__ is BatchSampler.__iter__
        if not plain or not isinstance(sampler_state, dict) or "position" not in sampler_state:
            return 0, None
        sampler_state["position"] = int(sampler_state["position"]) - skip * batch_sampler.batch_size
    return skip, list(saved["states"])
