"""How progress is drawn: a live rich bar on a terminal, a few plain lines anywhere else.

A log file or a CI console gets no ANSI escapes and no carriage returns: one line at the start,
one each time another tenth of the tasks is done (or, with no known total, each time the count
doubles), and one at the end. rich is imported only when a bar is drawn on a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

# A terminal bar is redrawn at most this often: updates in between only change counters.
_REFRESH_SECONDS = 0.1


def is_terminal(file: TextIO, force_terminal: bool | None) -> bool:
    """Whether to draw a live bar on ``file``: ``force_terminal`` when given, else whether
    ``file`` is a TTY."""
    if force_terminal is not None:
        return force_terminal
    isatty = getattr(file, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed file
        return False


def _seconds(value: float) -> str:
    return f"{int(value + 0.5)}s"


class PlainDisplay:
    """Progress as a few whole lines of text."""

    def __init__(self, file: TextIO, total: int | None, description: str, bar_width: int) -> None:
        self.file = file
        self.total = total
        self.description = description
        self.bar_width = bar_width
        self._start = time.perf_counter()
        self._next_mark = 1  # the completed count at which the next line is written
        self._last_written = -1
        self._write(0)

    def _mark_after(self, completed: int) -> int:
        if self.total:  # the count that reaches the next tenth of the total
            tenth = completed * 10 // self.total + 1
            return -(-self.total * tenth // 10)
        return max(1, completed * 2)

    def _line(self, completed: int) -> str:
        elapsed = time.perf_counter() - self._start
        rate = completed / elapsed if elapsed > 0 and completed else 0.0
        prefix = f"{self.description}: " if self.description else ""
        if not self.total:
            return (
                f"{prefix}completed: {completed}, elapsed: {_seconds(elapsed)}, {rate:.1f} tasks/s"
            )
        filled = min(self.bar_width, self.bar_width * completed // self.total)
        bar = ">" * filled + " " * (self.bar_width - filled)
        eta = (self.total - completed) / rate if rate else 0.0
        return (
            f"{prefix}[{bar}] {completed}/{self.total}, {rate:.1f} task/s, "
            f"elapsed: {_seconds(elapsed)}, ETA: {_seconds(eta) if completed else '?'}"
        )

    def _write(self, completed: int) -> None:
        self.file.write(self._line(completed) + "\n")
        self.file.flush()
        self._last_written = completed
        self._next_mark = self._mark_after(completed)

    def update(self, completed: int) -> None:
        if completed >= self._next_mark:
            self._write(completed)

    def finish(self, completed: int) -> None:
        if completed != self._last_written:
            self._write(completed)

    def close(self, completed: int) -> None:
        self.finish(completed)


class RichDisplay:
    """Progress as one live rich bar, redrawn at most ten times a second."""

    def __init__(
        self, file: TextIO, total: int | None, description: str, bar_width: int, color: str
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=file, force_terminal=True)
        self._progress = Progress(
            TextColumn(f"[{color}]{{task.description}}"),
            BarColumn(bar_width=bar_width),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            auto_refresh=False,  # no thread: redrawn from update(), so it works in any process
        )
        self._task = self._progress.add_task(description, total=total or None)
        self._progress.start()
        self._progress.refresh()
        self._last_refresh = time.perf_counter()
        self._finished = False

    def update(self, completed: int) -> None:
        now = time.perf_counter()
        if now - self._last_refresh >= _REFRESH_SECONDS:
            self._progress.update(self._task, completed=completed, refresh=True)
            self._last_refresh = now

    def finish(self, completed: int) -> None:
        if self._finished:
            return
        self._progress.update(self._task, completed=completed, refresh=True)
        self._progress.stop()
        self._finished = True

    def close(self, completed: int) -> None:
        self.finish(completed)


def open_display(
    total: int | None,
    *,
    file: TextIO | None = None,
    description: str = "",
    bar_width: int = 50,
    color: str = "blue",
    force_terminal: bool | None = None,
) -> PlainDisplay | RichDisplay:
    """A display of ``total`` tasks (None or 0: unknown) on ``file`` (stdout by default)."""
    file = sys.stdout if file is None else file
    if is_terminal(file, force_terminal):
        return RichDisplay(file, total, description, bar_width, color)
    return PlainDisplay(file, total, description, bar_width)
