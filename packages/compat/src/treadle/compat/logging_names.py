"""``mmengine.logging.logger``'s formatter and warning filter (treadle.logging's own, taking
MMEngine's constructor arguments) and the private helper its tests import beside ``_get_rank``,
``_get_world_size``, ``_get_host_info`` and ``_get_device_id``, which are treadle.logging.logger's
own (paths.NAMES points there)."""

from __future__ import annotations

import inspect
import logging
from logging import handlers
from typing import Any

from treadle.logging.formatter import LogFormatter
from treadle.logging.logger import _DropRepeatedWarnings


class MMFormatter(LogFormatter):
    """treadle's log formatter in MMEngine's layout, with MMEngine's arguments: ``color``
    (default True, as there); ``blink`` is accepted and ignored (treadle never blinks errors).

    Example:
        >>> MMFormatter(color=False, blink=True).color
        False
        >>> MMFormatter(color=False).layout
        'mmengine'
    """

    def __init__(self, color: bool = True, blink: bool = False, **kwargs: Any) -> None:
        super().__init__(color=color, layout="mmengine", **kwargs)


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
