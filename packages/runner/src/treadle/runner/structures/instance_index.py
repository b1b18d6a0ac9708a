"""How InstanceData reads an index: which rows it means, and how each kind of value gives them.

An index becomes either a slice (ints and slices, so tensors come back as views) or a 1-D
tensor of positions or a boolean mask. Tensors and arrays are indexed in one call; lists,
tuples, strings and objects with ``cat`` are built from the chosen rows, whose positions are
read back to the host once per lookup, and only when such a value is present.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

RowIndex = slice | torch.Tensor


def _one_row(position: int, length: int) -> slice:
    if not -length <= position < length:
        raise IndexError(f"index {position} is out of range for InstanceData of length {length}")
    position %= length
    return slice(position, position + 1)


def _rows_from_tensor(index: torch.Tensor, length: int) -> RowIndex:
    if index.dim() == 0 and not index.is_floating_point() and index.dtype != torch.bool:
        return _one_row(int(index), length)
    if index.dim() != 1:
        raise IndexError(
            f"InstanceData is indexed along its first dimension only: the index must be 1-D, "
            f"got shape {tuple(index.shape)}"
        )
    if index.dtype == torch.bool:
        if len(index) != length:
            raise IndexError(
                f"boolean mask of length {len(index)} does not match InstanceData of length "
                f"{length}"
            )
        return index
    if index.is_floating_point() or index.is_complex():
        raise TypeError(f"InstanceData indices must be integers or booleans, got {index.dtype}")
    return index if index.dtype == torch.long else index.long()


def rows(index: Any, length: int) -> RowIndex:
    """The rows ``index`` selects from an InstanceData of ``length`` rows."""
    if isinstance(index, bool):
        # bool is an int to Python; as an index it is a mistake, not row 0 or 1.
        raise TypeError("InstanceData cannot be indexed with a bool; use a boolean mask")
    if isinstance(index, (int, np.integer)):
        return _one_row(operator.index(index), length)
    if isinstance(index, slice):
        return index
    if isinstance(index, list):
        index = np.asarray(index) if index else np.zeros(0, dtype=np.int64)
    if isinstance(index, np.ndarray):
        if index.dtype.kind not in "biu":
            raise TypeError(f"InstanceData indices must be integers or booleans, got {index.dtype}")
        return _rows_from_tensor(torch.from_numpy(index), length)
    if isinstance(index, torch.Tensor):
        return _rows_from_tensor(index, length)
    raise TypeError(
        f"InstanceData cannot be indexed with {type(index).__name__}: use an int, a slice, a "
        f"field name, a list of ints, or a 1-D integer or boolean tensor or array"
    )


def positions(index: torch.Tensor, length: int) -> list[int]:
    """The row numbers (non-negative) that a tensor index selects, read to the host."""
    if index.dtype == torch.bool:
        return index.nonzero().view(-1).tolist()
    chosen = index.tolist()
    for position in chosen:
        if not -length <= position < length:
            raise IndexError(
                f"index {position} is out of range for InstanceData of length {length}"
            )
    return [position % length for position in chosen]


def take_rows(name: str, value: Any, chosen: list[int]) -> Any:
    """Rows ``chosen`` of a list, tuple, str, or of an object with ``__getitem__`` and ``cat``."""
    if isinstance(value, list):
        return [value[position] for position in chosen]
    if isinstance(value, tuple):
        return tuple(value[position] for position in chosen)
    if isinstance(value, str):
        return "".join(value[position] for position in chosen)
    if hasattr(value, "__getitem__") and hasattr(value, "cat"):
        pieces: Sequence[Any] = [value[position : position + 1] for position in chosen]
        return value.cat(pieces or [value[:0]])
    raise ValueError(
        f"InstanceData field {name!r} ({type(value).__name__}) cannot be indexed with a tensor "
        f"or list of rows: it is no tensor, array, list, tuple or str, and has no cat()"
    )
