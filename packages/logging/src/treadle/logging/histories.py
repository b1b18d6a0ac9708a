"""The histories a ``HistoryBuffer`` is built from: lists, NumPy arrays, tensors, and the arrays
of a buffer MMEngine pickled. Neither NumPy nor torch is imported: their objects are read
through ``tolist()``, ``reshape`` and ``dtype``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    kind = type(value).__name__
    return f"a {kind} of shape {tuple(shape)}" if shape is not None else f"a {kind}"


class HistoryLengthError(ValueError, AssertionError):
    """``log_history`` and ``count_history`` differ in length: a ValueError, and the
    AssertionError MMEngine raises there (its users' tests catch that)."""


def _as_list(name: str, history: Any) -> list[Any]:
    """``history`` as a flat list of elements; a 0-d array or a scalar is refused with its name.

    An array or nested list of several dimensions is read row after row, as MMEngine does (it
    appends to its history with ``np.append``, which flattens): ``[[1, 2, 3]]`` is 1, 2, 3.
    """
    shape = getattr(history, "shape", None)
    if shape is not None and len(shape) == 0:
        raise ValueError(f"{name} must be one-dimensional, got {_describe(history)}")
    if shape is not None and len(shape) > 1:
        history = history.reshape(-1)
    tolist = getattr(history, "tolist", None) if shape is not None else None
    if callable(tolist):
        # NumPy arrays and tensors: their numbers in one call (a tensor's with one device read),
        # far faster than a 0-d array or tensor per element.
        items = tolist()
        if isinstance(items, list):
            return items
    try:
        items = list(history)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence (list, tuple, numpy array or tensor), "
            f"got {type(history).__name__}: {history!r}"
        ) from None
    if any(isinstance(item, (list, tuple)) for item in items):
        return [leaf for item in items for leaf in _leaves(item)]
    return items


def _leaves(item: Any) -> list[Any]:
    if isinstance(item, (list, tuple)):
        return [leaf for inner in item for leaf in _leaves(inner)]
    shape = getattr(item, "shape", None)
    if shape is not None and len(shape) > 0:
        return list(item.reshape(-1))
    return [item]


def _plain_count(count: Any) -> int | float:
    number = float(count)
    return int(number) if number.is_integer() else number


def _numpy_history(array: Any, convert: Callable[[Any], Any]) -> tuple[list[Any], bool]:
    """The numbers of one of MMEngine's history arrays, and whether it is an integer array
    (its elements kept as ints; ``convert`` turns the others into treadle's numbers)."""
    integer = getattr(getattr(array, "dtype", None), "kind", "f") in "iub"
    items = array.tolist() if hasattr(array, "tolist") else list(array)
    if integer:
        return [int(item) for item in items], True
    return [convert(item) for item in items], False
