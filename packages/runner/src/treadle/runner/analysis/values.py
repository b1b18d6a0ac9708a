"""The inputs and outputs of one recorded operator, as operator handles read them.

MMEngine's handles receive ``torch._C.Value`` objects from a jit trace and read them with
``isCompleteTensor()``, ``type().sizes()``, ``toIValue()`` and ``node().inputs()``. treadle
records operators while the model runs (no trace), and hands its handles :class:`OpValue`
objects that answer the same calls, so a handle written for MMEngine keeps working.
A tensor is kept as its shape only: the analysis never holds on to activations.
"""

from __future__ import annotations

from typing import Any

import torch


class OpValue:
    """One argument or result of an operator: a tensor's shape, or a plain Python value.

    Example:
        >>> import torch
        >>> v = OpValue(torch.zeros(2, 3))
        >>> v.isCompleteTensor(), v.type().sizes(), get_shape(v)
        (True, [2, 3], [2, 3])
        >>> OpValue(False).toIValue()
        False
    """

    __slots__ = ("_items", "_shape", "_value")

    def __init__(self, value: Any = None, *, shape: Any = None) -> None:
        self._shape: list[int] | None = None
        self._value: Any = None
        self._items: list[OpValue] | None = None
        if shape is not None:
            self._shape = [int(s) for s in shape]
        elif isinstance(value, torch.Tensor):
            self._shape = list(value.shape)
        elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            # A list of tensors (einsum's operands): handles reach them through node().inputs().
            self._items = [OpValue(v) for v in value]
        else:
            self._value = value

    @property
    def shape(self) -> list[int] | None:
        """The tensor's shape, or None for a value that is not a tensor."""
        return None if self._shape is None else list(self._shape)

    # The torch._C.Value interface that MMEngine-style handles call.
    def isCompleteTensor(self) -> bool:
        return self._shape is not None

    def type(self) -> OpValue:
        return self

    def sizes(self) -> list[int]:
        if self._shape is None:
            raise TypeError(f"sizes() of an operator argument that is not a tensor: {self!r}")
        return list(self._shape)

    def toIValue(self) -> Any:
        return self._value

    def node(self) -> OpValue:
        return self

    def inputs(self) -> list[OpValue]:
        return list(self._items or [])

    def __repr__(self) -> str:
        if self._shape is not None:
            return f"OpValue(shape={self._shape})"
        if self._items is not None:
            return f"OpValue(items={self._items})"
        return f"OpValue({self._value!r})"


def get_shape(val: Any) -> list[int] | None:
    """The shape of an operator argument (an :class:`OpValue` or a tensor), None if not a tensor.

    Example:
        >>> import torch
        >>> get_shape(torch.zeros(4, 5)), get_shape(OpValue(3))
        ([4, 5], None)
    """
    if isinstance(val, torch.Tensor):
        return list(val.shape)
    if isinstance(val, OpValue) or hasattr(val, "isCompleteTensor"):
        return list(val.type().sizes()) if val.isCompleteTensor() else None
    return None
