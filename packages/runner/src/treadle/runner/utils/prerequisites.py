"""Decorators that refuse to run a function until the packages or programs it needs exist."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .packages import is_installed

_DEFAULT_MESSAGE = (
    'Prerequisites "{}" are required in method "{}" but not found, please install them first.'
)

#: Whether the message is also printed to stdout before the RuntimeError is raised, as MMEngine
#: does (its users' tests read it there). treadle.compat switches it on while installed.
PRINT_MISSING = False


def check_prerequisites(
    prerequisites: str | list[str],
    checker: Callable[[str], bool],
    msg_tmpl: str = _DEFAULT_MESSAGE,
) -> Callable[[Callable], Callable]:
    """A decorator: each call checks every prerequisite with ``checker`` and raises
    ``RuntimeError`` with ``msg_tmpl.format(missing, function_name)`` when some are missing
    (printed to stdout first where :data:`PRINT_MISSING` is set, as MMEngine does).

    Example:
        >>> @check_prerequisites(['ls'], checker=lambda name: name == 'ls')
        ... def listing():
        ...     return 'ok'
        >>> listing()
        'ok'
    """
    names = [prerequisites] if isinstance(prerequisites, str) else list(prerequisites)

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            missing = [name for name in names if not checker(name)]
            if missing:
                message = msg_tmpl.format(", ".join(missing), func.__name__)
                if PRINT_MISSING:
                    print(message)
                raise RuntimeError(message)
            return func(*args, **kwargs)

        return checked

    return decorate


def requires_package(prerequisites: str | list[str]) -> Callable[[Callable], Callable]:
    """A decorator that refuses to run the function unless the packages are installed.

    Example:
        >>> @requires_package('numpy')
        ... def mean(values):
        ...     import numpy
        ...     return float(numpy.mean(values))
    """
    return check_prerequisites(prerequisites, checker=is_installed)


def requires_executable(prerequisites: str | list[str]) -> Callable[[Callable], Callable]:
    """A decorator that refuses to run the function unless the programs are on PATH.

    Example:
        >>> @requires_executable('ffmpeg')
        ... def encode(folder): ...
    """
    import shutil

    return check_prerequisites(prerequisites, checker=lambda name: shutil.which(name) is not None)
