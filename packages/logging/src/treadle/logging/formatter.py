"""The format of treadle's log lines, with optional ANSI colours for terminals."""

from __future__ import annotations

import logging
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

DATE_FORMAT = "%Y/%m/%d %H:%M:%S"
_PREFIX = "%(asctime)s - %(name)s - "
_SUFFIX = " - %(message)s"
# Warnings and errors say where they come from, so the reader finds the code that complained.
_LOCATION = " - %(filename)s:%(lineno)d"

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


def _level_format(color: str, with_location: bool) -> str:
    level = f"{color}%(levelname)s{_RESET}" if color else "%(levelname)s"
    return _PREFIX + level + (_LOCATION if with_location else "") + _SUFFIX


class LogFormatter(logging.Formatter):
    """Formats records as ``time - logger - LEVEL - message``; warnings and errors add
    ``file:line`` before the message.

    With ``color=True`` the level name is coloured: ERROR and CRITICAL red, WARNING yellow, DEBUG
    green, INFO in the terminal's default colour. The record itself is never changed, so a file
    handler that formats the same record afterwards writes no escape codes.

    Example:
        >>> import logging, sys
        >>> handler = logging.StreamHandler(sys.stdout)
        >>> handler.setFormatter(LogFormatter(color=False))
    """

    def __init__(self, color: bool = False, datefmt: str = DATE_FORMAT) -> None:
        super().__init__(_level_format("", False), datefmt)
        self.color = color
        # One plain formatter per level band, built once: choosing among them costs a comparison
        # per record, and copying the record to colour its level name is avoided.
        self._error = logging.Formatter(_level_format(_RED if color else "", True), datefmt)
        self._warning = logging.Formatter(_level_format(_YELLOW if color else "", True), datefmt)
        self._info = logging.Formatter(_level_format("", False), datefmt)
        self._debug = logging.Formatter(_level_format(_GREEN if color else "", False), datefmt)

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
