"""The format of treadle's log lines, with optional ANSI colours for terminals."""

from __future__ import annotations

import logging
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

DATE_FORMAT = "%Y/%m/%d %H:%M:%S"
#: The date of MMEngine's console lines (its log files keep :data:`DATE_FORMAT`).
MMENGINE_CONSOLE_DATE_FORMAT = "%m/%d %H:%M:%S"
_PREFIX = "%(asctime)s - %(name)s - "
_SUFFIX = " - %(message)s"
# Warnings and errors say where they come from, so the reader finds the code that complained.
_LOCATION = " - %(filename)s:%(lineno)d"
# MMEngine's layout: errors only, with the full path and the function.
_MMENGINE_LOCATION = " - %(pathname)s - %(funcName)s - %(lineno)d"
#: The layouts LogFormatter writes: (where warnings come from, where errors come from).
LAYOUTS = {"treadle": (_LOCATION, _LOCATION), "mmengine": ("", _MMENGINE_LOCATION)}

_RESET = "\x1b[0m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"
_GREEN = "\x1b[32m"


def stream_supports_color(stream: IO[str]) -> bool:
    """Return whether ANSI colours should be written to ``stream``.

    Colours go only to a terminal, and never when the environment variable ``NO_COLOR`` is set
    to a non-empty value (https://no-color.org).
    """
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


def _level_format(color: str, location: str) -> str:
    level = f"{color}%(levelname)s{_RESET}" if color else "%(levelname)s"
    return _PREFIX + level + location + _SUFFIX


class LogFormatter(logging.Formatter):
    """Formats records as ``time - logger - LEVEL - message``; warnings and errors add
    ``file:line`` before the message.

    ``layout='mmengine'`` writes MMEngine's lines instead (treadle.compat's logger uses it):
    warnings without a location, errors with ``path - function - line``.

    With ``color=True`` the level name is coloured: ERROR and CRITICAL red, WARNING yellow, DEBUG
    green, INFO in the terminal's default colour. The record itself is never changed, so a file
    handler that formats the same record afterwards writes no escape codes.

    Example:
        >>> import logging, sys
        >>> handler = logging.StreamHandler(sys.stdout)
        >>> handler.setFormatter(LogFormatter(color=False))
    """

    def __init__(
        self, color: bool = False, datefmt: str = DATE_FORMAT, layout: str = "treadle"
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        warning_at, error_at = LAYOUTS[layout]
        super().__init__(_level_format("", ""), datefmt)
        self.color = color
        self.layout = layout
        # One plain formatter per level band, built once: choosing among them costs a comparison
        # per record, and copying the record to colour its level name is avoided.
        self._error = logging.Formatter(_level_format(_RED if color else "", error_at), datefmt)
        self._warning = logging.Formatter(
            _level_format(_YELLOW if color else "", warning_at), datefmt
        )
        self._info = logging.Formatter(_level_format("", ""), datefmt)
        self._debug = logging.Formatter(_level_format(_GREEN if color else "", ""), datefmt)

    def format(self, record: logging.LogRecord) -> str:
        level = record.levelno
        if level >= logging.ERROR:
            formatter = self._error
        elif level >= logging.WARNING:
            formatter = self._warning
        elif level >= logging.INFO:
            formatter = self._info
        else:
            formatter = self._debug
        return formatter.format(record)
