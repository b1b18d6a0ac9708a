"""``DefaultSampler``: the epoch-based sampler, rank-aware and resumable mid-epoch."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from operator import length_hint
from typing import Any

import torch
from torch.utils.data import Sampler

from treadle.dist import get_dist_info, sync_random_seed
from treadle.runner.registry import DATA_SAMPLERS

from .sampler_state import check_sampler_state


@DATA_SAMPLERS.register_module()
class DefaultSampler(Sampler[int]):
    """Each rank's share of the dataset's indices, shuffled with ``seed + epoch``.

    The order is MMEngine's: one ``torch.randperm`` of the whole dataset per epoch (the same on
    every rank), padded by repeating it to a multiple of the world size when ``round_up``, then
    every ``world_size``-th index from ``rank`` on. ``seed=None`` draws a seed shared by all
    ranks. Call ``set_epoch`` before each epoch for a new order.

    ``state_dict()`` records the epoch, the seed and ``position``: how many indices this rank's
    iterator has handed out in the current epoch. After ``load_state_dict(state)`` the next
    ``iter(sampler)`` yields exactly the rest of that epoch; later ones yield whole epochs.
    A DataLoader reads ahead of the training loop, so the loop should set
    ``state['position']`` to the number of samples it actually consumed before saving (or
    loading) the state. A state saved under another world size, dataset length, ``shuffle``
    or ``round_up`` is refused. Ranks advance together, so one rank's state resumes any rank.

    Example:
        >>> sampler = DefaultSampler(range(10), seed=0)
        >>> it = iter(sampler)
        >>> first = [next(it) for _ in range(4)]
        >>> state = sampler.state_dict()               # position 4
        >>> resumed = DefaultSampler(range(10), seed=123)
        >>> resumed.load_state_dict(state)
        >>> first + list(resumed) == list(DefaultSampler(range(10), seed=0))
        True
    """

    def __init__(
        self, dataset: Sized, shuffle: bool = True, seed: int | None = None, round_up: bool = True
    ) -> None:
        self.rank, self.world_size = get_dist_info()
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = sync_random_seed() if seed is None else seed
        self.epoch = 0
        self.round_up = round_up
        length = len(dataset)
        if round_up:
            self.num_samples = math.ceil(length / self.world_size)
            self.total_size = self.num_samples * self.world_size
        else:
            self.num_samples = math.ceil((length - self.rank) / self.world_size)
            self.total_size = length
        # Where the next iterator starts (set by load_state_dict), and the live iterator with
        # (epoch, start, length), from which state_dict reads how far it got.
        self._resume_position = 0
        self._live: tuple[int, int, int, Iterator[int]] | None = None

    def _indices_of_rank(self) -> list[int]:
        length = len(self.dataset)
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(length, generator=generator).tolist()
        else:
            indices = list(range(length))
        if self.round_up and self.total_size > length:
            indices = (indices * (self.total_size // length + 1))[: self.total_size]
        if self.world_size > 1:
            indices = indices[self.rank : self.total_size : self.world_size]
        return indices

    def __iter__(self) -> Iterator[int]:
        indices = self._indices_of_rank()
        start, self._resume_position = self._resume_position, 0
        if start:
            indices = indices[start:]
        # A plain list iterator: as fast as iteration gets, and its length_hint tells
        # state_dict how many indices it has handed out, with no per-index bookkeeping.
        iterator = iter(indices)
        self._live = (self.epoch, start, len(indices), iterator)
        return iterator

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the order of ``epoch`` from the next iterator on. A resumed position is kept
        when ``epoch`` is the epoch it was saved in (the loop sets the epoch it resumes)."""
        if epoch != self.epoch:
            self._resume_position = 0
        self.epoch = epoch

    def _position(self) -> int:
        if self._resume_position or self._live is None or self._live[0] != self.epoch:
            return self._resume_position
        _, start, length, iterator = self._live
        return start + length - length_hint(iterator)

    def state_dict(self) -> dict[str, Any]:
        """Where this rank is: the epoch, the seed and the position in the epoch, with the
        values that must match on load (world size, dataset length, shuffle, round_up)."""
        return {
            "type": type(self).__name__,
            "epoch": self.epoch,
            "seed": self.seed,
            "position": self._position(),
            "rank": self.rank,
            "world_size": self.world_size,
            "dataset_length": len(self.dataset),
            "shuffle": self.shuffle,
            "round_up": self.round_up,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state``: the next iterator yields the rest of its epoch."""
        expected = {
            "world_size": self.world_size,
            "dataset_length": len(self.dataset),
            "shuffle": self.shuffle,
            "round_up": self.round_up,
        }
        # With round_up=False the last ranks have one index fewer; any rank's state fits.
        longest_share = math.ceil(len(self.dataset) / self.world_size)
        position = check_sampler_state(self, state, expected, longest_share)
        self.seed = state["seed"]
        self.epoch = state.get("epoch", 0)
        self._resume_position = position
        self._live = None
