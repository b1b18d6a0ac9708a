"""Moving what a model predicted to host memory, so that metrics keep no device memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch


def to_cpu(data: Any) -> Any:
    """Return ``data`` with every tensor (and every object with a ``cpu()`` method, such as a
    data element) moved to the CPU and detached, through dicts, lists and tuples.

    Example:
        >>> to_cpu({'pred': torch.ones(2, device='cuda')})  # doctest: +SKIP
        {'pred': tensor([1., 1.])}
    """
    if isinstance(data, torch.Tensor):
        return data.detach().cpu()
    if isinstance(data, Mapping):
        moved = {key: to_cpu(value) for key, value in data.items()}
        try:
            return type(data)(moved)
        except TypeError:  # a mapping type that cannot be made from a dict (defaultdict)
            return moved
    if isinstance(data, (list, tuple)) and not hasattr(data, "_fields"):
        return type(data)(to_cpu(item) for item in data)
    if isinstance(data, tuple):  # a named tuple takes its fields as arguments
        return type(data)(*(to_cpu(item) for item in data))
    if callable(getattr(data, "cpu", None)):
        return data.cpu()
    return data
