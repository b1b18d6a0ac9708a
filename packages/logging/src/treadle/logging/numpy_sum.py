"""Sums and quotients in NumPy's order, without NumPy: ``HistoryBuffer.mean`` returns, to the
last bit, what MMEngine's buffer (which keeps its history in NumPy arrays) returns.

A float64 array's ``sum()`` is not a left-to-right sum. NumPy adds pairwise: a run of fewer than
8 numbers left to right; a run of 8 to 128 with eight accumulators (the first takes elements 0,
8, 16..., the second 1, 9, 17..., and so on over the largest multiple of 8), combined as
``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the remaining 0-7 elements left to
right; a longer run is split at half its length rounded down to a multiple of 8, and the sums of
the two halves are added. The reduction starts from its identity, 0.0. Summing left to right
instead differs in the last bit for about 40% of random windows, which code that compares a
mean with NumPy's using ``==`` (MMEngine's own tests do) sees.

An integer array sums exactly, wrapping around at 64 bits as NumPy's int64 does; dividing two
of its sums converts each to float64 first (NumPy's ``true_divide``), which differs from Python's
exactly rounded ``int / int`` beyond 2**53.
"""

from __future__ import annotations

import math
import warnings
from functools import reduce
from operator import add

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# NumPy's PW_BLOCKSIZE: runs up to this long are summed with eight accumulators.
_BLOCK = 128
_UNROLL = 8
_INT64_SPAN = 1 << 64
_INT64_MIN = -(1 << 63)


def _run(values: Sequence[int | float], start: int, length: int) -> float:
    """NumPy's pairwise sum of ``values[start:start + length]`` (``length`` >= 8).

    Every accumulator starts from 0.0, so an int element is converted to float64 exactly as
    NumPy converts it when it stores it in a float64 array (``0.0 + x`` only differs from ``x``
    in the sign of a zero, which never changes a non-zero sum, and the reduction's own 0.0 start
    turns a -0.0 total into 0.0 as well).
    """
    if length > _BLOCK:
        half = length // 2
        half -= half % _UNROLL
        return _run(values, start, half) + _run(values, start + half, length - half)
    blocked = start + length - length % _UNROLL
    r0, r1, r2, r3, r4, r5, r6, r7 = values[start : start + _UNROLL]
    r0 = 0.0 + r0
    r1 = 0.0 + r1
    r2 = 0.0 + r2
    r3 = 0.0 + r3
    r4 = 0.0 + r4
    r5 = 0.0 + r5
    r6 = 0.0 + r6
    r7 = 0.0 + r7
    # Row by row: the fastest of the forms measured (slices with reduce, zip, map).
    for row in range(start + _UNROLL, blocked, _UNROLL):
        x0, x1, x2, x3, x4, x5, x6, x7 = values[row : row + _UNROLL]
        r0 += x0
        r1 += x1
        r2 += x2
        r3 += x3
        r4 += x4
        r5 += x5
        r6 += x6
        r7 += x7
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for index in range(blocked, start + length):
        total += values[index]
    return total


def float64_sum(values: Sequence[int | float]) -> float:
    """``numpy.asarray(values, dtype=numpy.float64).sum()``, bit for bit, as a Python float.

    ``values`` must support slicing (a list or tuple). ints are converted as NumPy converts them.

    Example:
        >>> float64_sum([0.1] * 10)  # left to right: 0.9999999999999999
        1.0
        >>> float64_sum([])
        0.0
    """
    length = len(values)
    if length < _UNROLL:
        return reduce(add, values, 0.0)
    if length < 2 * _UNROLL:
        # The usual window (10): one row of eight accumulators, then the rest, inlined.
        r0, r1, r2, r3, r4, r5, r6, r7 = values[:_UNROLL]
        total = ((0.0 + r0 + r1) + (0.0 + r2 + r3)) + ((0.0 + r4 + r5) + (0.0 + r6 + r7))
        for index in range(_UNROLL, length):
            total += values[index]
        return total
    return 0.0 + _run(values, 0, length)


def int64_sum(values: Sequence[int]) -> int:
    """``numpy.asarray(values, dtype=numpy.int64).sum()``: the exact sum, wrapped to 64 bits as
    NumPy's integer addition wraps (silently).

    Example:
        >>> int64_sum([2**62, 2**62])
        -9223372036854775808
    """
    total = sum(values)
    if _INT64_MIN <= total < -_INT64_MIN:
        return total
    return (total - _INT64_MIN) % _INT64_SPAN + _INT64_MIN


def true_divide(numerator: int | float, denominator: int | float) -> float:
    """``numpy.true_divide`` of two float64 (or int64) scalars: each is converted to float64,
    then divided; dividing by zero gives inf or nan with a RuntimeWarning, as NumPy does.

    Example:
        >>> true_divide(3, 2)
        1.5
    """
    numerator = float(numerator)
    denominator = float(denominator)
    if denominator != 0.0 or math.isnan(numerator):
        return numerator / denominator if denominator != 0.0 else math.nan
    if numerator == 0.0:
        warnings.warn(
            "invalid value encountered in scalar divide: 0/0 is nan (the counts of the window "
            "sum to 0)",
            RuntimeWarning,
            stacklevel=3,
        )
        return math.nan
    if not math.isinf(numerator):
        warnings.warn(
            "divide by zero encountered in scalar divide: the counts of the window sum to 0",
            RuntimeWarning,
            stacklevel=3,
        )
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
