"""How InstanceData reads an index: which rows it means, and how each kind of value gives them.

An index becomes either a slice (ints and slices, so tensors come back as views) or a 1-D
tensor of positions or a boolean mask. Tensors and arrays are indexed in one call; lists,
tuples, strings and objects with ``cat`` are built from the chosen rows, whose positions are
read back to the host once per lookup, and only when such a value is present. A position out
of range picks what MMEngine's ``value[position::len(value)]`` picks (nothing past the end),
since MMEngine's users rely on it.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .errors import DataElementIndexError, DataElementTypeError

RowIndex = slice | torch.Tensor


def _one_row(position: int, length: int) -> slice:
    if not -length <= position < length:
        raise IndexError(f"Index {position} out of range for InstanceData of length {length}")
    position %= length
    return slice(position, position + 1)


def _rows_from_tensor(index: torch.Tensor, length: int) -> RowIndex:
    if index.dim() == 0 and not index.is_floating_point() and index.dtype != torch.bool:
        return _one_row(int(index), length)
    if index.dim() != 1:
        raise DataElementIndexError(
            f"InstanceData is indexed along its first dimension only (Only support to get the "
            f"values along the first dimension): the index must be 1-D, got shape "
            f"{tuple(index.shape)}"
        )
    if index.dtype == torch.bool:
        if len(index) != length:
            raise DataElementIndexError(
                f"boolean mask of length {len(index)} does not match the shape of the indexed "
                f"tensor: InstanceData has length {length}"
            )
        return index
    if index.is_floating_point() or index.is_complex():
        raise DataElementTypeError(
            f"InstanceData indices must be integers or booleans, got {index.dtype}"
        )
    return index if index.dtype == torch.long else index.long()


def rows(index: Any, length: int) -> RowIndex:
    """The rows ``index`` selects from an InstanceData of ``length`` rows."""
    if isinstance(index, bool):
        # bool is an int to Python, and MMEngine reads it as row 0 or 1: most likely a mistake.
        warnings.warn(
            f"InstanceData indexed with {index}: it reads as row {int(index)}; index with a "
            f"boolean mask to select rows",
            stacklevel=3,
        )
    if isinstance(index, (int, np.integer)):
        return _one_row(operator.index(index), length)
    if isinstance(index, slice):
        return index
    if isinstance(index, list):
        index = np.asarray(index) if index else np.zeros(0, dtype=np.int64)
    if isinstance(index, np.ndarray):
        if index.dtype.kind not in "biu":
            raise DataElementTypeError(
                f"InstanceData indices must be integers or booleans, got {index.dtype}"
            )
        return _rows_from_tensor(torch.from_numpy(index), length)
    if isinstance(index, torch.Tensor):
        return _rows_from_tensor(index, length)
    raise DataElementTypeError(
        f"InstanceData cannot be indexed with {type(index).__name__}: use an int, a slice, a "
        f"field name, a list of ints, or a 1-D integer or boolean tensor or array"
    )


def positions(index: torch.Tensor) -> list[int]:
    """The row numbers that a tensor index selects, read to the host (negative ones as given)."""
    if index.dtype == torch.bool:
        return index.nonzero().view(-1).tolist()
    return index.tolist()


def _all_in_range(chosen: list[int], length: int) -> bool:
    return not chosen or (-length <= min(chosen) and max(chosen) < length)


def take_rows(name: str, value: Any, chosen: list[int]) -> Any:
    """Rows ``chosen`` of a list, tuple, str, or of an object with ``__getitem__`` and ``cat``."""
    sequence = isinstance(value, (list, tuple, str))
    if sequence and _all_in_range(chosen, len(value)):
        rows = [value[position] for position in chosen]
        if isinstance(value, list):
            return rows
        return tuple(rows) if isinstance(value, tuple) else "".join(rows)
    if sequence or (hasattr(value, "__getitem__") and hasattr(value, "cat")):
        # MMEngine's pieces: one row each, none past the end, the first row before the start.
        length = len(value)
        pieces: Sequence[Any] = [value[position::length] for position in chosen] or [value[:0]]
        if not sequence:
            return value.cat(pieces)
        joined = pieces[0]
        for piece in pieces[1:]:
            joined = joined + piece
        return joined
    raise ValueError(
        f"InstanceData field {name!r} cannot be indexed with a tensor or list of rows: "
        f"The type of `{name}` is `{type(value)}`, which has no attribute of `cat`, so it does "
        f"not support slice with `bool` (nor is it a tensor, array, list, tuple or str)"
    )
