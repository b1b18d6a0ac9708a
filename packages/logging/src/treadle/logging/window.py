"""The window of a ``HistoryBuffer`` statistic, and the statistics over it, as MMEngine's buffer
computes them with NumPy.

MMEngine keeps the history in a NumPy array and reads ``array[-window_size:]``: ``None`` is the
whole history, a positive int the last values; 0 is the whole history too (``[-0:]`` is
``[0:]``) and a negative int drops the first values (``[-(-3):]`` is ``[3:]``). treadle reads
the same windows and warns of the last two, which are rarely meant.

The array's dtype decides the arithmetic: a buffer built empty, or from any float, holds float64
(an int logged later is converted); one built from ints only holds int64 until a float is logged.
``mean`` sums in NumPy's order (``numpy_sum``), so it equals MMEngine's to the last bit;
``current``, ``max`` and ``min`` return a float from a float64 history (as MMEngine returns a
``numpy.float64``), and ``max``/``min`` return nan when the window holds one, as NumPy does.
"""

from __future__ import annotations

import math
import warnings
from itertools import islice

from .errors import LoggingTypeError
from .numpy_sum import float64_sum, int64_sum, true_divide

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable
    from typing import Any


def check_window(window_size: Any, stacklevel: int) -> None:
    """Refuse what MMEngine refuses (a window that is neither None nor an int: its
    AssertionError, with its phrase); warn of a bool, 0 or a negative int."""
    if window_size is None:
        return
    if not isinstance(window_size, int):
        raise LoggingTypeError(
            f"window_size must be an int or None, got {type(window_size).__name__}: "
            f"{window_size!r} (The type of window size should be int, but got "
            f"{type(window_size)})"
        )
    if isinstance(window_size, bool):
        meaning = "the whole history" if not window_size else "the last value"
        message = (
            f"window_size={window_size} is read as the int {int(window_size)}, which means "
            f"{meaning} (MMEngine's buffer reads a bool as an int too); pass an int or None"
        )
    elif window_size == 0:
        message = (
            "window_size=0 means the whole history (MMEngine's numpy slice [-0:] is [0:]); "
            "pass None to say so"
        )
    elif window_size < 0:
        message = (
            f"window_size={window_size} means every value but the first {-window_size} "
            f"(MMEngine's numpy slice [{-window_size}:]), not the last ones; pass a positive int"
        )
    else:
        return
    warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def last(items: deque[Any], window_size: int | None) -> list[Any]:
    """``items[-window_size:]`` as a list, with NumPy's (and Python's) slice meaning."""
    length = len(items)
    if window_size is None or window_size == 0 or window_size >= length:
        return list(items)
    if window_size > 0:
        # From the right end: islice from the left would walk the whole deque to reach it.
        tail = list(islice(reversed(items), window_size))
        tail.reverse()
        return tail
    return list(islice(items, -window_size, None))


def mean(values: list[Any], counts: list[Any], int_values: bool, int_counts: bool) -> float:
    """``values.sum() / counts.sum()`` of MMEngine's arrays (int64 when ``int_*``, else float64),
    bit for bit: nan with a RuntimeWarning for an empty window, as NumPy's 0.0 / 0.0."""
    if not values:
        warnings.warn(
            "HistoryBuffer.mean of an empty window is nan (MMEngine's numpy divides 0.0 by 0.0)",
            RuntimeWarning,
            stacklevel=3,
        )
        return math.nan
    total = int64_sum(values) if int_values else float64_sum(values)
    if int_counts:
        count: int | float = int64_sum(counts)
    elif counts.count(1) == len(counts):
        # The usual counts (one sample per value): any order sums them exactly.
        count = len(counts)
    else:
        count = float64_sum(counts)
    if count and not int_values:
        # A float total: Python's division is IEEE's, as NumPy's (the count converted first).
        return total / count
    return true_divide(total, count)


def extreme(values: list[Any], pick: Callable[[list[Any]], Any], integer: bool) -> Any:
    """``max`` or ``min`` (``pick``) of a non-empty window, as NumPy's: a float from a float64
    history, nan if the window holds one (Python's comparisons would pass over it)."""
    result = pick(values)
    if integer:
        return result
    result = float(result)
    total = sum(values)
    if total != total and any(value != value for value in values):
        return math.nan
    return result


def value_of(value: Any, integer: bool) -> Any:
    """One element as MMEngine's array gives it: a float from a float64 history."""
    return value if integer else float(value)
