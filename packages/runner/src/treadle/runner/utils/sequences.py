"""Checks and casts over sequences: the small type questions configs and transforms ask."""

from __future__ import annotations

import itertools
from collections import abc
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .errors import UtilsValueError


def is_str(x: Any) -> bool:
    """Whether ``x`` is a str (bytes are not)."""
    return isinstance(x, str)


def is_seq_of(
    seq: Any, expected_type: type | tuple[type, ...], seq_type: type | None = None
) -> bool:
    """Whether ``seq`` is a sequence (of ``seq_type`` when given) whose items are all
    ``expected_type``.

    Example:
        >>> is_seq_of([1, 2], int), is_seq_of((1, 'a'), int), is_seq_of([1], int, tuple)
        (True, False, False)
    """
    container = abc.Sequence if seq_type is None else seq_type
    if not isinstance(seq, container):
        return False
    return all(isinstance(item, expected_type) for item in seq)


def is_list_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a list whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=list)


def is_tuple_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a tuple whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=tuple)


def iter_cast(inputs: Iterable, dst_type: type, return_type: type | None = None) -> Any:
    """Cast every item of ``inputs`` to ``dst_type``: a lazy iterator, or a ``return_type``
    (list, tuple, ...) built from the casts.

    Example:
        >>> iter_cast(['1', '2'], int, list)
        [1, 2]
    """
    if not isinstance(inputs, abc.Iterable):
        raise TypeError(f"inputs must be an iterable object, got {type(inputs).__name__}")
    if not isinstance(dst_type, type):
        raise TypeError(f'"dst_type" must be a valid type, got {dst_type!r}')
    casts = map(dst_type, inputs)
    return casts if return_type is None else return_type(casts)


def list_cast(inputs: Iterable, dst_type: type) -> list:
    """``iter_cast`` into a list."""
    return iter_cast(inputs, dst_type, return_type=list)


def tuple_cast(inputs: Iterable, dst_type: type) -> tuple:
    """``iter_cast`` into a tuple."""
    return iter_cast(inputs, dst_type, return_type=tuple)


def slice_list(in_list: Sequence, lens: int | Sequence[int]) -> list:
    """Cut ``in_list`` into consecutive pieces of the lengths ``lens`` (or all of length
    ``lens`` when it is an int); the lengths must add up to the list's length.

    Example:
        >>> slice_list([1, 2, 3, 4, 5], [2, 3])
        [[1, 2], [3, 4, 5]]
    """
    if isinstance(lens, int):
        if lens <= 0 or len(in_list) % lens:
            # Also the AssertionError MMEngine raises here.
            raise UtilsValueError(
                f"slice_list: a list of length {len(in_list)} does not cut into pieces of "
                f"length {lens}"
            )
        lens = [lens] * (len(in_list) // lens)
    if not isinstance(lens, list) or not all(isinstance(n, int) for n in lens):
        raise TypeError(f'"indices" must be an integer or a list of integers, got {lens!r}')
    if sum(lens) != len(in_list):
        raise ValueError(
            f"sum of lens and list length does not match: {sum(lens)} != {len(in_list)}"
        )
    ends = list(itertools.accumulate(lens))
    return [in_list[end - n : end] for n, end in zip(lens, ends, strict=True)]


def concat_list(in_list: Iterable[Iterable]) -> list:
    """Join a list of lists (any iterables) into one list.

    Example:
        >>> concat_list([[1], [2, 3], (4,)])
        [1, 2, 3, 4]
    """
    return list(itertools.chain.from_iterable(in_list))


def to_ntuple(n: int) -> Callable[[Any], Any]:
    """A function that repeats a single value ``n`` times into a tuple and keeps an iterable
    (str included) as it is.

    Example:
        >>> to_ntuple(3)(1), to_ntuple(3)([4, 5, 6])
        ((1, 1, 1), [4, 5, 6])
    """

    def parse(x: Any) -> Any:
        if isinstance(x, abc.Iterable):
            return x
        return tuple(itertools.repeat(x, n))

    return parse


to_1tuple = to_ntuple(1)
to_2tuple = to_ntuple(2)
to_3tuple = to_ntuple(3)
to_4tuple = to_ntuple(4)
