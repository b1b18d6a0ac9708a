"""Collate functions: how a DataLoader turns a list of samples into a batch.

``pseudo_collate`` only transposes (a list of dicts becomes a dict of lists), leaving
stacking to the model's data preprocessor; ``default_collate`` also stacks tensors, NumPy
arrays and numbers into tensors, as torch's does, but keeps data elements (BaseDataElement)
and strings in lists. Both are registered in ``FUNCTIONS`` (``COLLATE_FUNCTIONS`` is the same
registry, as in MMEngine), so a DataLoader config names them: ``collate_fn=dict(type=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch.utils.data import default_collate as torch_default_collate

from treadle.runner.registry import FUNCTIONS
from treadle.runner.structures import BaseDataElement

COLLATE_FUNCTIONS = FUNCTIONS


def _check_equal_lengths(data_batch: Sequence[Sequence]) -> None:
    lengths = {len(item) for item in data_batch}
    if len(lengths) > 1:
        raise RuntimeError(
            f"the samples of the batch are sequences of different lengths {sorted(lengths)}; "
            "each field must have the same number of elements in every sample"
        )


def _transpose(data_batch: Sequence, collate: Callable[[Sequence], Any]) -> Any:
    """What both collate functions do with containers: collate field by field."""
    first = data_batch[0]
    kind = type(first)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return kind(*(collate(field) for field in zip(*data_batch, strict=True)))
    if isinstance(first, Sequence):
        _check_equal_lengths(data_batch)
        fields = [collate(field) for field in zip(*data_batch, strict=True)]
        if isinstance(first, tuple):
            return fields  # a list, as torch's default_collate returns for tuples
        try:
            return kind(fields)
        except TypeError:  # a sequence type that is not built from a list (range...)
            return fields
    # A mapping: the same type, with each key collated over the batch.
    return kind({key: collate([item[key] for item in data_batch]) for key in first})


@FUNCTIONS.register_module()
def pseudo_collate(data_batch: Sequence) -> Any:
    """Transpose a batch without stacking anything: the structure of one sample, with a list
    of the batch's values at each leaf.

    Example:
        >>> pseudo_collate([{'img': 1, 'label': 'a'}, {'img': 2, 'label': 'b'}])
        {'img': [1, 2], 'label': ['a', 'b']}
    """
    first = data_batch[0]
    if isinstance(first, (str, bytes)) or not isinstance(first, (Sequence, Mapping)):
        return data_batch
    return _transpose(data_batch, pseudo_collate)


@FUNCTIONS.register_module()
def default_collate(data_batch: Sequence) -> Any:
    """Transpose a batch and stack its tensors, NumPy arrays and numbers into tensors (with
    torch's default_collate); strings and data elements stay lists.

    Example:
        >>> samples = [{'x': torch.zeros(2), 'id': 'a'}, {'x': torch.ones(2), 'id': 'b'}]
        >>> batch = default_collate(samples)
        >>> batch['x'].shape, batch['id']
        (torch.Size([2, 2]), ['a', 'b'])
    """
    first = data_batch[0]
    if isinstance(first, torch.Tensor):
        return torch_default_collate(data_batch)
    if isinstance(first, (BaseDataElement, str, bytes)):
        return data_batch
    if isinstance(first, (Sequence, Mapping)):
        return _transpose(data_batch, default_collate)
    return torch_default_collate(data_batch)
