"""Checks of the indices a user gives a dataset (``indices=``, ``get_subset``, ``[i]``)."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np


class NegativeIndexError(IndexError, ValueError):
    """A negative index past the start: an IndexError, and the ValueError MMEngine's
    ConcatDataset raises for it."""


def checked_index(index: int, length: int, dataset: object, negative_phrase: bool = False) -> int:
    """``index`` made non-negative; an IndexError naming it and the length when out of range.

    With ``negative_phrase`` (ConcatDataset), a negative index past the start raises
    NegativeIndexError with MMEngine's words too, since downstream tests catch its ValueError.
    """
    if -length <= index < length:
        return index + length if index < 0 else index
    message = f"index {index} is out of range for {type(dataset).__name__} of length {length}"
    if negative_phrase and index < 0:
        raise NegativeIndexError(
            f"{message} (absolute value of index({index}) should not exceed dataset "
            f"length({length}))"
        )
    raise IndexError(message)


def subset_positions(indices: Any, length: int, dataset: object) -> list[int]:
    """The positions a subset keeps, as MMEngine reads ``indices``: an int N keeps the first N
    items (the last -N when negative; all of them when N is larger than the dataset), a
    sequence keeps those items in its order."""
    is_int = isinstance(indices, Integral) and not isinstance(indices, bool)
    is_sequence = isinstance(indices, (Sequence, np.ndarray)) and not isinstance(
        indices, (str, bytes)
    )
    if not (is_int or is_sequence):
        raise TypeError(
            f"indices must be an int or a sequence of ints, got {type(indices).__name__}: "
            f"{indices!r}"
        )
    if is_int:
        indices = int(indices)
        return list(range(length)[:indices] if indices >= 0 else range(length)[indices:])
    return [checked_index(int(index), length, dataset) for index in indices]
