"""A data list held as one byte buffer, so that DataLoader workers can share it.

A list of dicts is thousands of Python objects; a forked worker that merely reads one updates
its reference count, which copies the memory page it lives on, and after an epoch every worker
holds a private copy of the whole list (copy-on-read). Pickling every item into one NumPy
``uint8`` buffer, with an ``int64`` array of the items' end offsets, leaves two objects whose
pages are never written after the fork.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np


def serialize_items(items: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(data_bytes, data_address)``: the pickled items end to end, and where each one ends.

    Example:
        >>> data_bytes, data_address = serialize_items([{'a': 1}, {'b': 2}])
        >>> item_at(data_bytes, data_address, 1)
        {'b': 2}
    """
    pickled = [pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL) for item in items]
    data_address = np.cumsum([len(blob) for blob in pickled], dtype=np.int64)
    # One bytearray, so the buffer is a single writable block that numpy owns the view of.
    data_bytes = np.frombuffer(bytearray(b"".join(pickled)), dtype=np.uint8)
    return data_bytes, data_address


def item_at(data_bytes: np.ndarray, data_address: np.ndarray, index: int) -> Any:
    """The item at ``index`` (0 <= index < len(data_address)), unpickled: a fresh copy."""
    start = int(data_address[index - 1]) if index > 0 else 0
    return pickle.loads(memoryview(data_bytes[start : int(data_address[index])]))


def serialized_subset(
    data_bytes: np.ndarray, data_address: np.ndarray, indices: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The buffer and addresses of the items at ``indices`` (valid, non-negative), in order."""
    chosen = np.asarray(indices, dtype=np.int64)
    ends = data_address[chosen]
    starts = np.where(chosen > 0, data_address[np.maximum(chosen - 1, 0)], 0)
    lengths = ends - starts
    if len(chosen) == 0:
        return np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64)
    # Gather every chosen byte at once: for each item, the run start..end of the old buffer.
    new_address = np.cumsum(lengths)
    offsets_in_item = np.arange(new_address[-1]) - np.repeat(new_address - lengths, lengths)
    positions = np.repeat(starts, lengths) + offsets_in_item
    return data_bytes[positions], new_address
