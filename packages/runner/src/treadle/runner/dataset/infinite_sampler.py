"""``InfiniteSampler``: an endless stream of indices for iteration-based training."""

from __future__ import annotations

from collections.abc import Iterator, Sized
from operator import length_hint
from typing import Any

import torch
from torch.utils.data import Sampler

from treadle.dist import get_dist_info, sync_random_seed
from treadle.runner.registry import DATA_SAMPLERS

from .sampler_state import check_sampler_state


@DATA_SAMPLERS.register_module()
class InfiniteSampler(Sampler[int]):
    """Permutations of the dataset one after another, forever, split between ranks.

    The stream is MMEngine's: a generator seeded once with ``seed`` gives one
    ``torch.randperm`` per pass (``range`` when not shuffling), and rank ``r`` takes every
    ``world_size``-th index of the endless concatenation from ``r`` on. The stream belongs
    to the sampler: a new ``iter(sampler)`` goes on where the last one stopped, even when the
    last one was dropped.

    ``state_dict()['position']`` is how many indices this rank has handed out in total;
    ``load_state_dict`` restarts the stream right after them (the loop may overwrite the
    position with what it consumed, since a DataLoader reads ahead). A state saved under another
    world size, dataset length or ``shuffle`` is refused.

    Example:
        >>> sampler = InfiniteSampler(range(5), seed=0)
        >>> it = iter(sampler)
        >>> first = [next(it) for _ in range(7)]
        >>> resumed = InfiniteSampler(range(5), seed=1)
        >>> resumed.load_state_dict(sampler.state_dict())
        >>> rest = iter(resumed)
        >>> [next(rest) for _ in range(3)] == [next(it) for _ in range(3)]
        True
    """

    def __init__(self, dataset: Sized, shuffle: bool = True, seed: int | None = None) -> None:
        self.rank, self.world_size = get_dist_info()
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = sync_random_seed() if seed is None else seed
        self.size = len(dataset)
        self.indices = self._indices_of_rank(0)

    def _indices_of_rank(self, position: int) -> Iterator[int]:
        """The stream of this rank from its ``position``-th index on."""
        # Progress, read by state_dict: indices handed out before the current pass, and the
        # current pass's share with its iterator.
        self._before_pass = position
        self._pass: tuple[int, Iterator[int]] | None = None
        return self._stream(position)

    def _stream(self, position: int) -> Iterator[int]:
        if self.size == 0:
            raise ValueError("InfiniteSampler cannot sample from an empty dataset")
        generator = torch.Generator()
        generator.manual_seed(self.seed)
        # The next index is the stream's (rank + position * world_size)-th: skip whole passes
        # by drawing their permutations (the generator must advance), then start mid-pass.
        pass_number, start = divmod(self.rank + position * self.world_size, self.size)
        if self.shuffle:
            for _ in range(pass_number):
                torch.randperm(self.size, generator=generator)
        while True:
            if self.shuffle:
                order = torch.randperm(self.size, generator=generator).tolist()
            else:
                order = list(range(self.size))
            share = order[start :: self.world_size]
            iterator = iter(share)
            self._pass = (len(share), iterator)
            yield from iterator
            self._before_pass += len(share)
            pass_number += 1
            start = (self.rank - pass_number * self.size) % self.world_size

    def __iter__(self) -> Iterator[int]:
        # Not ``yield from``: dropping this iterator must not close the shared stream (with
        # ``yield from`` its close() would end the stream for every later iterator).
        stream = self.indices
        while True:
            yield next(stream)

    def __len__(self) -> int:
        return self.size

    def set_epoch(self, epoch: int) -> None:
        """Does nothing: the stream has no epochs (kept for the loops' uniform calls)."""

    def _position(self) -> int:
        if self._pass is None:
            return self._before_pass
        length, iterator = self._pass
        return self._before_pass + length - length_hint(iterator)

    def state_dict(self) -> dict[str, Any]:
        """How many indices this rank has handed out, with the seed and the values that must
        match on load (world size, dataset length, shuffle)."""
        position = self._position()
        return {
            "type": type(self).__name__,
            "epoch": (self.rank + position * self.world_size) // max(self.size, 1),
            "seed": self.seed,
            "position": position,
            "rank": self.rank,
            "world_size": self.world_size,
            "dataset_length": self.size,
            "shuffle": self.shuffle,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the stream of ``state`` right after its position."""
        expected = {
            "world_size": self.world_size,
            "dataset_length": self.size,
            "shuffle": self.shuffle,
        }
        position = check_sampler_state(self, state, expected, max_position=2**62)
        self.seed = state["seed"]
        self.indices = self._indices_of_rank(position)
