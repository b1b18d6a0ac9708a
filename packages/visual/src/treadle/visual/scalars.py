"""Check and convert the values given to ``add_scalar`` and ``add_scalars``."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Mapping
from typing import Any


def scalar_value(name: str, value: Any) -> int | float:
    """Return ``value`` as a Python int or float, or raise TypeError naming ``name``.

    Accepts Python and numpy numbers and anything with a one-element ``item()`` (0-d or
    one-element tensors and arrays), so a loss tensor can be logged as it is. bools are
    numbers here, as they are to numpy and every tracker.

    Example:
        >>> scalar_value('lr', 0.1)
        0.1
    """
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return value.item() if hasattr(value, "item") else value  # numpy scalars -> Python
    item = getattr(value, "item", None)
    if callable(item) and _element_count(value) == 1:
        try:
            number = item()
        except (TypeError, ValueError, RuntimeError) as error:
            raise _not_a_number(name, value) from error
        if isinstance(number, numbers.Number) and not isinstance(number, complex):
            return number
    raise _not_a_number(name, value)


def step_value(step: Any) -> int:
    """Return ``step`` as a Python int: numpy integers and integer tensors are steps too.

    Example:
        >>> import numpy as np
        >>> step_value(np.int64(3))
        3
    """
    try:
        return operator.index(step)
    except TypeError:
        raise TypeError(f"step must be an integer, got {type(step).__name__}: {step!r}") from None


def scalar_dict(scalars: Mapping[str, Any]) -> dict[str, int | float]:
    """Check every value of ``scalars`` with :func:`scalar_value`; keys must be str."""
    if not isinstance(scalars, Mapping):
        raise TypeError(
            f"add_scalars expects a dict of name -> number, got {type(scalars).__name__}"
        )
    checked = {}
    for name, value in scalars.items():
        if not isinstance(name, str):
            raise TypeError(f"scalar names must be str, got {name!r} ({type(name).__name__})")
        checked[name] = scalar_value(name, value)
    return checked


def _element_count(value: Any) -> int | None:
    """Elements in a tensor (``numel()``) or an array (``size``); None for anything else."""
    numel = getattr(value, "numel", None)
    if callable(numel):
        return numel()
    size = getattr(value, "size", None)
    return size if isinstance(size, int) else None


def _not_a_number(name: str, value: Any) -> TypeError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return TypeError(
        f"scalar {name!r} must be a number (int, float, or a one-element array or tensor), "
        f"got {type(value).__name__}: {shown}"
    )
