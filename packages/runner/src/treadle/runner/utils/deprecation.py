"""Decorators that keep old names working while telling users what replaces them."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .errors import UtilsTypeError


def _under_note(note: str, docstring: str | None) -> str:
    """``docstring`` under the deprecation ``note``, as MMEngine lays it out (code reads it): the
    note, a blank line, then the summary (up to the first blank line) and the body, each
    indented by four spaces."""
    import textwrap  # only when a deprecated function is defined

    summary, _, body = (docstring or "").partition("\n\n")
    # The summary's first line has no indentation and the others have the function's: each line
    # loses its own.
    summary = "\n".join(line.lstrip() for line in summary.split("\n"))
    parts = [note, "\n\n", textwrap.indent(summary, "    ")]
    if body:
        parts += ["\n\n", textwrap.indent(textwrap.dedent(body), "    ")]
    return "".join(parts)


def deprecated_function(since: str, removed_in: str, instructions: str) -> Callable:
    """Mark a function deprecated: its first call logs a warning through the current logger
    naming the versions and ``instructions``, and its docstring starts with a deprecation note,
    the original text indented under it (MMEngine's layout).

    Example:
        >>> @deprecated_function('0.2.0', '0.3.0', 'use `load_weights` instead')
        ... def load_params(path):
        ...     return path
        >>> load_params('a.pth')  # logs once: '...load_params' is deprecated in version 0.2.0 ...
        'a.pth'
    """

    def decorate(func: Callable) -> Callable:
        name = f"{func.__module__}.{func.__qualname__}"
        message = (
            f"{name!r} is deprecated in version {since} and will be removed in version "
            f"{removed_in}. Please {instructions.rstrip('.')}."
        )
        warned = False

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal warned
            if not warned:  # once per function: a loop calling it would flood the log
                import logging

                from treadle.logging import print_log

                print_log(message, logger="current", level=logging.WARNING)
                warned = True
            return func(*args, **kwargs)

        note = (
            f".. deprecated:: {since}\n"
            f"    Deprecated and will be removed in version {removed_in}.\n"
            f"    Please {instructions.rstrip('.')}.\n"
        )
        wrapper.__doc__ = _under_note(note, func.__doc__)
        return wrapper

    return decorate


def deprecated_api_warning(name_dict: dict[str, str], cls_name: str | None = None) -> Callable:
    """Accept keyword arguments by their old names: ``name_dict`` maps old to new; a call with
    an old name warns (``DeprecationWarning``) and passes the value under the new name.

    Example:
        >>> @deprecated_api_warning({'in_channel': 'in_channels'})
        ... def conv(in_channels=3):
        ...     return in_channels
        >>> conv(in_channel=8)  # DeprecationWarning: "in_channel" is deprecated in `conv` ...
        8
    """

    def decorate(func: Callable) -> Callable:
        where = f"{cls_name}.{func.__name__}" if cls_name else func.__name__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in name_dict.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise UtilsTypeError(
                        f"`{where}` got both {old!r} (deprecated) and its replacement {new!r}; "
                        f"pass only {new!r}"
                    )
                warnings.warn(
                    f'"{old}" is deprecated in `{where}`, please use "{new}" instead',
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate
