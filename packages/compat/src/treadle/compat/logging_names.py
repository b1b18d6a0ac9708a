"""``mmengine.logging.logger``'s formatter and warning filter: treadle.logging's own, taking
MMEngine's constructor arguments."""

from __future__ import annotations

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


__all__ = ["FilterDuplicateWarning", "MMFormatter"]
