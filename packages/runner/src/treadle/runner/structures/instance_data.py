"""InstanceData: the instances of one sample (boxes, labels, masks...), one row each.

Every data field has the same length; indexing selects the same rows from all of them, and
``cat`` stacks several InstanceData row-wise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized
from typing import Any

import numpy as np
import torch

from .base_data_element import BaseDataElement
from .errors import DataElementTypeError, DataElementValueError
from .instance_index import positions, rows, take_rows


def _joined(name: str, values: list[Any]) -> Any:
    first = values[0]
    if isinstance(first, torch.Tensor):
        return torch.cat(values, dim=0)
    if isinstance(first, np.ndarray):
        return np.concatenate(values, axis=0)
    if isinstance(first, list):
        joined = list(first)
        for value in values[1:]:
            joined += value
        return joined
    if isinstance(first, (str, tuple)):
        joined = first
        for value in values[1:]:
            joined = joined + value
        return joined
    if hasattr(first, "cat"):
        return first.cat(values)
    raise ValueError(
        f"InstanceData.cat cannot join field {name!r}: The type of `{name}` is `{type(first)}` "
        f"which has no attribute of `cat` (nor is it a tensor, array, list, tuple or str)"
    )


class InstanceData(BaseDataElement):
    """Per-instance data fields of equal length, indexed and concatenated together.

    Values may be tensors, arrays, lists, tuples, strings, or objects with ``__len__``,
    ``__getitem__`` and a ``cat`` classmethod (such as mask structures).

    Example:
        >>> import torch
        >>> instances = InstanceData(metainfo=dict(img_shape=(4, 4)))
        >>> instances.bboxes = torch.rand(3, 4)
        >>> instances.labels = torch.tensor([2, 0, 2])
        >>> instances.names = ['cat', 'dog', 'cat']
        >>> len(instances)
        3
        >>> instances[instances.labels == 2].names
        ['cat', 'cat']
        >>> len(InstanceData.cat([instances, instances[0]]))
        4
    """

    def _checked_data(self, name: str, value: Any) -> Any:
        if not isinstance(value, Sized):
            raise DataElementTypeError(
                f"InstanceData field {name!r} holds one row per instance: value must contain "
                f"`__len__` attribute, got {type(value).__name__}: {value!r}"
            )
        reference = self._another_data_field(name)
        if reference is None:
            return value
        expected = len(getattr(self, reference))
        # As MMEngine: while the instance has no rows, a field of any length is taken.
        if expected and len(value) != expected:
            raise DataElementValueError(
                f"InstanceData field {name!r} has length {len(value)}, but field {reference!r} "
                f"has length {expected}: the length of values is not consistent with the "
                f"length of this :obj:`InstanceData` (one row per instance in every field)"
            )
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(
                f"InstanceData field names must be str (attribute name must be string), got "
                f"{type(name).__name__}: {name!r}"
            )
        setattr(self, name, value)

    def __len__(self) -> int:
        for name in self._data_names:
            return len(getattr(self, name))
        return 0

    def __getitem__(self, item: Any) -> Any:
        """A field by name, or an InstanceData of the rows ``item`` selects.

        ``item`` may be an int (one row, kept as a length-1 InstanceData), a slice, a list of
        ints or bools, or a 1-D integer or boolean tensor or array.
        """
        if isinstance(item, str):
            return getattr(self, item)
        index = rows(item, len(self))
        selected = type(self)(metainfo=self.metainfo)
        if isinstance(index, slice):
            selected.set_data({name: value[index] for name, value in self.items()})
            return selected
        array_index = None
        chosen = None
        data = {}
        for name, value in self.items():
            if isinstance(value, torch.Tensor):
                data[name] = value[index]
            elif isinstance(value, np.ndarray):
                if array_index is None:
                    array_index = index.cpu().numpy()
                data[name] = value[array_index]
            else:
                if chosen is None:
                    chosen = positions(index)
                data[name] = take_rows(name, value, chosen)
        selected.set_data(data)
        return selected

    @classmethod
    def cat(cls, instances_list: Iterable[InstanceData]) -> InstanceData:
        """Stack the rows of several InstanceData with the same fields, in order.

        The result has the class and metainfo of the first; a single one is returned as is.
        """
        instances = list(instances_list)
        if not instances:
            raise DataElementValueError(
                "InstanceData.cat needs at least one InstanceData, got none"
            )
        for position, instance in enumerate(instances):
            if not isinstance(instance, InstanceData):
                raise DataElementTypeError(
                    f"InstanceData.cat joins InstanceData only; item {position} is "
                    f"{type(instance).__name__}: {instance!r}"
                )
        if len(instances) == 1:
            return instances[0]
        first = instances[0]
        expected = set(first.all_keys())
        for position, instance in enumerate(instances[1:], start=1):
            keys = set(instance.all_keys())
            if keys != expected:
                raise DataElementValueError(
                    f"There are different keys in `instances_list`: InstanceData.cat needs the "
                    f"same keys in every item, but item {position} lacks "
                    f"{sorted(expected - keys)} and adds {sorted(keys - expected)} compared "
                    f"with item 0"
                )
        names = first.keys()
        joined = type(first)(metainfo=first.metainfo)
        joined.set_data(
            {
                name: _joined(name, [getattr(instance, name) for instance in instances])
                for name in names
            }
        )
        return joined
