"""``mmengine.logging.logger``'s formatter and warning filter (treadle.logging's own, taking
MMEngine's constructor arguments) and the private helpers its tests import beside ``_get_rank``
and ``_get_world_size``, which are treadle.logging.logger's own."""

from __future__ import annotations

import inspect
import logging
import warnings
from getpass import getuser
from logging import handlers
from socket import gethostname
from typing import Any

from treadle.logging.formatter import LogFormatter
from treadle.logging.logger import _DropRepeatedWarnings


class MMFormatter(LogFormatter):
    """treadle's log formatter with MMEngine's arguments: ``color`` (default True, as there);
    ``blink`` is accepted and ignored (treadle never blinks errors).

    Example:
        >>> MMFormatter(color=False, blink=True).color
        False
    """

    def __init__(self, color: bool = True, blink: bool = False, **kwargs: Any) -> None:
        super().__init__(color=color, **kwargs)


class FilterDuplicateWarning(_DropRepeatedWarnings):
    """Lets each distinct WARNING record through once (``name`` is MMEngine's logger name, kept
    for its signature).

    Example:
        >>> FilterDuplicateWarning('mmengine').name
        'mmengine'
    """

    def __init__(self, name: str = "mmengine") -> None:
        super().__init__()
        self.name = name


def _get_host_info() -> str:
    """``'user@host'`` of this process, or ``''`` with a warning where either is unknown (a
    container without a user entry), as MMEngine's distributed log file names use it.

    Example:
        >>> '@' in _get_host_info() or _get_host_info() == ''
        True
    """
    try:
        return f"{getuser()}@{gethostname()}"
    except Exception as error:  # getuser raises KeyError or OSError; neither is worth failing on
        warnings.warn(f"Host or user not found: {error}", stacklevel=2)
        return ""


def _get_logging_file_handlers() -> dict[str, type[logging.FileHandler]]:
    """The file handler classes of ``logging.handlers`` by name (``RotatingFileHandler``, ...).

    Example:
        >>> _get_logging_file_handlers()['WatchedFileHandler'] is handlers.WatchedFileHandler
        True
    """
    return {
        name: value
        for name, value in vars(handlers).items()
        if not name.startswith("__")
        and inspect.isclass(value)
        and issubclass(value, logging.FileHandler)
    }


__all__ = ["FilterDuplicateWarning", "MMFormatter"]
