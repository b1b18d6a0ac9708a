"""Check and convert the values given to ``add_scalar`` and ``add_scalars``.

Numbers (Python, numpy, one-element arrays and tensors) become Python numbers. Other values
are what MMEngine calls scalars too: its local backend writes any JSON value to
``scalars.json``. :func:`logged_value` keeps them, for the Visualizer to hand on and
LocalVisBackend to write (:func:`json_value`); trackers that record numbers only use
:func:`scalar_value`, which refuses them.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Mapping
from typing import Any

from .errors import VisualTypeError
from .strict_checks import StrictChecks, suspicious


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


class NotANumber:
    """A logged value that is not a number (a str, a list, None...), kept as it was given.

    ``logged_value`` wraps such values so that a backend tells them from numbers with one
    ``isinstance`` test.

    Example:
        >>> logged_value('note', 'warm-up').value
        'warm-up'
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"NotANumber({self.value!r})"


def logged_value(name: str, value: Any) -> int | float | NotANumber:
    """``value`` as a Python number (see :func:`scalar_value`), else wrapped in NotANumber.

    Example:
        >>> logged_value('lr', 0.1), logged_value('tags', ['a'])
        (0.1, NotANumber(['a']))
    """
    if isinstance(value, (int, float)):  # the common case first: a plain number
        return value
    try:
        return scalar_value(name, value)
    except TypeError:
        return NotANumber(value)


def json_value(name: str, value: Any) -> Any:
    """``value`` as JSON can hold it: numpy arrays, numpy numbers and tensors become lists and
    numbers (MMEngine's local backend writes numpy values this way). Raises TypeError, with
    MMEngine's words ("... is unsupported for json dump"), for anything else JSON cannot hold.

    Example:
        >>> import numpy as np
        >>> json_value('sizes', np.array([1, 2]))
        [1, 2]
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(name, item) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: json_value(name, item) for key, item in value.items()}
    elif callable(getattr(value, "tolist", None)):
        # numpy arrays and numbers, tensors (moved to the host first).
        if hasattr(value, "detach"):
            value = value.detach().cpu()
        return json_value(name, value.tolist())
    raise TypeError(
        f"scalar {name!r}: {type(value)} is unsupported for json dump (scalars.json holds "
        "numbers and JSON values: str, bool, None, lists and dicts of them, numpy arrays)"
    )


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
        raise VisualTypeError(  # MMEngine asserts isinstance(scalar_dict, dict)
            f"add_scalars expects a dict of name -> number, got {type(scalars).__name__}"
        )
    checked = {}
    for name, value in scalars.items():
        if not isinstance(name, str):
            raise TypeError(f"scalar names must be str, got {name!r} ({type(name).__name__})")
        checked[name] = scalar_value(name, value)
    return checked


def logged_scalars(scalars: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The values of ``add_scalars`` as a Visualizer hands them on: numbers converted once
    (:func:`scalar_value`), other values as they came; and, when there are such values, the
    numbers alone (else None), for backends that record numbers only. Under strict checks a
    value that is not a number raises TypeError.

    Example:
        >>> logged_scalars({'loss': 0.5, 'note': 'warm-up'})
        ({'loss': 0.5, 'note': 'warm-up'}, {'loss': 0.5})
    """
    if not isinstance(scalars, Mapping):
        scalar_dict(scalars)  # raises the error that is also MMEngine's assertion
    values: dict[str, Any] = {}
    others = False
    for name, value in scalars.items():
        if not isinstance(name, str):
            raise TypeError(f"scalar names must be str, got {name!r} ({type(name).__name__})")
        number = logged_value(name, value)
        if isinstance(number, NotANumber):
            if StrictChecks.enabled:
                raise _not_a_number(name, value)
            values[name], others = value, True
        else:
            values[name] = number
    if not others:
        return values, None
    numbers = {name: value for name, value in values.items() if _is_number(value)}
    return values, numbers


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


def allow_non_number(name: str, value: Any, what: str) -> None:
    """Warn that the value of ``name`` is not a number and ``what`` is done with it; under
    strict checks, raise the TypeError that says it must be one."""
    suspicious(
        _not_a_number(name, value),
        f"scalar {name!r} is not a number ({type(value).__name__}): {what}",
    )


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
