"""``ElasticBatchSampler``: the same global batches at any world size, resumable at another one.

The order of the samples is a function of the seed, the epoch and the global position only:

- an epoch (``DefaultSampler``) is ``torch.randperm(len(dataset))`` seeded with
  ``seed + epoch`` (``range`` without shuffling), DefaultSampler's own permutation; an endless
  stream (``InfiniteSampler``) is InfiniteSampler's: one permutation per pass, drawn in turn
  from a generator seeded once with ``seed``;
- global batch ``b`` is positions ``[b*G, (b+1)*G)`` of that order, and rank ``r`` of ``W``
  takes the contiguous part ``[b*G + r*S, b*G + (r+1)*S)``, ``S = G / W`` (where ``W`` does
  not divide ``G``, the first ``G % W`` ranks take one sample more: ``ElasticPlan.share``);
- the last incomplete global batch of an epoch is padded with the epoch's first samples
  (``round_up=True``, DefaultSampler's default) or dropped (``round_up=False`` or the
  loader's ``drop_last=True``): one rule, whatever ``W``; a stream has no last batch.

Within an epoch no sample is repeated or skipped but by that padding. The state records the
global position (samples of the epoch, or of the stream, consumed by all ranks together), the
world size it was saved at, the global batch size and the dataset's length; a run at another
world size loads it and goes on with the next global batch. Each index is handed out as a
:class:`~.sample_seeding.SampleKey`, with the epoch's seed for per-sample randomness.

Example:
    >>> from treadle.runner.dataset import DefaultSampler
    >>> from treadle.runner.dataset.elastic_plan import elastic_plan
    >>> batches = ElasticBatchSampler(DefaultSampler(range(10), seed=0),
    ...                               elastic_plan(dict(global_batch_size=4), world_size=1))
    >>> len(batches), [key.sample for key in next(iter(batches))]
    (3, [4, 1, 7, 5])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch.utils.data import Sampler

from treadle.dist import get_dist_info

from .default_sampler import DefaultSampler
from .elastic_plan import ElasticPlan
from .infinite_sampler import InfiniteSampler
from .sample_seeding import SampleKey, stream_seed
from .sampler_state import check_sampler_state


class _Stream:
    """InfiniteSampler's endless order read forward: the indices at stream positions
    ``[start, start + count)``, each with the seed of its pass."""

    def __init__(self, seed: int, size: int, shuffle: bool) -> None:
        self.seed, self.size, self.shuffle = seed, size, shuffle
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)
        self.pass_number = -1
        self.order: list[int] = []
        self.stream = 0

    def _go_to(self, pass_number: int) -> None:
        while self.pass_number < pass_number:
            self.pass_number += 1
            if not self.shuffle:
                self.order = list(range(self.size))
            elif self.pass_number < pass_number:  # skipped: only the generator advances
                torch.randperm(self.size, generator=self.generator)
            else:
                self.order = torch.randperm(self.size, generator=self.generator).tolist()
        self.stream = stream_seed(self.seed, pass_number)

    def take(self, start: int, count: int) -> list[SampleKey]:
        keys: list[SampleKey] = []
        while count:
            pass_number, offset = divmod(start, self.size)
            self._go_to(pass_number)
            chunk = self.order[offset : offset + count]
            stream = self.stream
            keys.extend(SampleKey(stream, index) for index in chunk)
            start += len(chunk)
            count -= len(chunk)
        return keys


class ElasticBatchSampler(Sampler[list[SampleKey]]):
    """This rank's part of each global batch of ``sampler``'s order (see the module).

    Args:
        sampler: a DefaultSampler (epochs) or an InfiniteSampler (an endless stream); its
            seed, shuffle, round_up and epoch decide the order, not its rank split.
        plan: the elastic plan (:func:`~.elastic_plan.elastic_plan`) of this world size.
        drop_last: drop an epoch's last incomplete global batch (also when the sampler has
            ``round_up=False``); else it is padded.
    """

    def __init__(self, sampler: Any, plan: ElasticPlan, drop_last: bool = False) -> None:
        if not isinstance(sampler, (DefaultSampler, InfiniteSampler)):
            raise TypeError(
                f"elastic needs train_dataloader.sampler to be a DefaultSampler or an "
                f"InfiniteSampler, got {type(sampler).__name__}: elastic training shares one "
                f"global order between the processes, and only those two samplers' orders do "
                f"not depend on the number of processes"
            )
        rank, world_size = get_dist_info()
        if plan.world_size != world_size:
            raise ValueError(
                f"the elastic plan is for {plan.world_size} processes, this run has {world_size}"
            )
        self.sampler = sampler
        self.plan = plan
        self.rank = rank
        self.dataset = sampler.dataset
        self.endless = isinstance(sampler, InfiniteSampler)
        self.drop_last = bool(drop_last or (not self.endless and not sampler.round_up))
        length = len(self.dataset)
        if length == 0:
            raise ValueError("elastic training cannot sample from an empty dataset")
        if not self.endless and self.epoch_samples() == 0:
            raise ValueError(
                f"elastic: the train dataset has {length} samples, fewer than one global batch "
                f"of {plan.global_batch_size}, and an epoch's last incomplete global batch is "
                f"dropped (the sampler's round_up=False or the loader's drop_last=True): an "
                f"epoch would have no step; lower elastic.global_batch_size or pad (round_up)"
            )
        # Finite: (epoch, position) set by load_state_dict for the next iterator, and the live
        # iterator's (epoch, start, [global batches handed out]).
        self._resume: tuple[int, int] | None = None
        self._live: tuple[int, int, list[int]] | None = None
        # Endless: the stream position the next iterator starts at, and the live one's.
        self._stream_start = 0

    # -- the order ------------------------------------------------------------------------

    @property
    def global_batch_size(self) -> int:
        return self.plan.global_batch_size

    def epoch_samples(self) -> int:
        """Positions of one epoch: whole global batches, the last padded or dropped."""
        length, size = len(self.dataset), self.plan.global_batch_size
        batches = length // size if self.drop_last else -(-length // size)
        return batches * size

    def _epoch_order(self, epoch: int) -> list[int]:
        length = len(self.dataset)
        if not self.sampler.shuffle:
            return list(range(length))
        generator = torch.Generator()
        generator.manual_seed(self.sampler.seed + epoch)
        return torch.randperm(length, generator=generator).tolist()

    def __iter__(self) -> Iterator[list[SampleKey]]:
        if self.endless:
            return self._endless()
        return self._epoch()

    def _epoch(self) -> Iterator[list[SampleKey]]:
        epoch = self.sampler.epoch
        start = 0
        if self._resume is not None:
            saved_epoch, position = self._resume
            self._resume = None
            if saved_epoch == epoch:
                start = position
        order = self._epoch_order(epoch)
        length, total = len(order), self.epoch_samples()
        size, share = self.plan.global_batch_size, self.plan.share(self.rank)
        first = self.plan.offset(self.rank)
        stream = stream_seed(self.sampler.seed, epoch)
        handed_out = [0]
        self._live = (epoch, start, handed_out)
        for begin in range(start, total, size):
            low = begin + first
            if low + share <= length:
                indices = order[low : low + share]
            else:  # the padding of the last global batch repeats the epoch's first samples
                indices = [order[position % length] for position in range(low, low + share)]
            handed_out[0] += 1
            yield [SampleKey(stream, index) for index in indices]

    def _endless(self) -> Iterator[list[SampleKey]]:
        stream = _Stream(self.sampler.seed, len(self.dataset), self.sampler.shuffle)
        size, share = self.plan.global_batch_size, self.plan.share(self.rank)
        first = self.plan.offset(self.rank)
        begin = self._stream_start
        while True:
            keys = stream.take(begin + first, share)
            begin += size
            self._stream_start = begin
            yield keys

    def __len__(self) -> int:
        if self.endless:  # nominal: global batches in one pass over the data
            return -(-len(self.dataset) // self.plan.global_batch_size)
        return self.epoch_samples() // self.plan.global_batch_size

    def set_epoch(self, epoch: int) -> None:
        """The epoch of the next iterator (its sampler's ``set_epoch``)."""
        if not self.endless:
            self.sampler.set_epoch(epoch)

    # -- position -------------------------------------------------------------------------

    def samples_after(self, start: int, batches: int) -> int:
        """The global position after ``batches`` global batches from position ``start``: what
        the train loop records (the loader reads ahead of it)."""
        position = start + batches * self.plan.global_batch_size
        return position if self.endless else min(position, self.epoch_samples())

    def _position(self) -> int:
        if self.endless:
            return self._stream_start
        epoch = self.sampler.epoch
        if self._resume is not None:
            saved_epoch, position = self._resume
            return position if saved_epoch == epoch else 0
        if self._live is None or self._live[0] != epoch:
            return 0
        _, start, handed_out = self._live
        return self.samples_after(start, handed_out[0])

    def state_dict(self) -> dict[str, Any]:
        """The global position with what it means: the epoch (not for a stream), the seed,
        the global batch size, the dataset's length, shuffle, drop_last, and the world size
        and rank that saved it (informative: any world size loads it)."""
        _, world_size = get_dist_info()
        state = {
            "type": type(self).__name__,
            "sampler": type(self.sampler).__name__,
            "seed": self.sampler.seed,
            "position": self._position(),
            "global_batch_size": self.plan.global_batch_size,
            "dataset_length": len(self.dataset),
            "shuffle": self.sampler.shuffle,
            "drop_last": self.drop_last,
            "rank": self.rank,
            "world_size": world_size,
        }
        if not self.endless:  # a stream's pass follows from its position
            state["epoch"] = self.sampler.epoch
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Go on from ``state``'s global position, at this run's world size."""
        if isinstance(state, Mapping) and "global_batch_size" not in state:
            raise ValueError(
                f"the train sampler state ({state.get('type', 'no type')}) holds no global "
                f"position: it was saved by a run without elastic, whose sampler records where "
                f"each rank stood in its own share of the data; resume it without elastic"
            )
        expected = {
            "sampler": type(self.sampler).__name__,
            "dataset_length": len(self.dataset),
            "global_batch_size": self.plan.global_batch_size,
            "shuffle": self.sampler.shuffle,
            "drop_last": self.drop_last,
        }
        limit = 2**62 if self.endless else self.epoch_samples()
        position = check_sampler_state(self, state, expected, max_position=limit)
        if position % self.plan.global_batch_size:
            raise ValueError(
                f"ElasticBatchSampler state: position {position} is not a whole number of "
                f"global batches of {self.plan.global_batch_size}"
            )
        self.sampler.seed = state["seed"]
        if self.endless:
            self._stream_start = position
        else:
            self.sampler.epoch = int(state.get("epoch", 0))
            self._resume = (self.sampler.epoch, position)
        self._live = None
