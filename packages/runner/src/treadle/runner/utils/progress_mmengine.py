"""MMEngine's progress text, for ProgressBar under treadle.compat.

One line rewritten in place with a carriage return at every update, in MMEngine's words, with
the bar narrowed to fit the terminal (``COLUMNS``): code and tests written for MMEngine read
this output. treadle's own displays (progress_display) write a few whole lines instead.
"""

from __future__ import annotations

import shutil
import time
from typing import TextIO


class MMEngineDisplay:
    """Progress as MMEngine writes it: ``[>>>   ] 3/10, 1.0 task/s, elapsed: 3s, ETA:     7s``
    (``completed: 3, elapsed: 3s, 1.0 tasks/s`` without a total).

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> display = MMEngineDisplay(out, 4, bar_width=4)
        >>> out.getvalue()
        '[    ] 0/4, elapsed: 0s, ETA:'
    """

    def __init__(self, file: TextIO, total: int | None, bar_width: int) -> None:
        self.file = file
        self.total = total or 0
        self.bar_width = bar_width
        self._drawn = 0
        self._ended = False
        if self.total > 0:
            file.write(f"[{' ' * bar_width}] 0/{self.total}, elapsed: 0s, ETA:")
        else:
            file.write("completed: 0, elapsed: 0s")
        file.flush()
        self._start = time.perf_counter()

    def update(self, completed: int) -> None:
        elapsed = time.perf_counter() - self._start
        rate = completed / elapsed if elapsed > 0 else float("inf")
        seconds = int(elapsed + 0.5)
        if self.total > 0:
            fraction = completed / self.total
            eta = int(elapsed * (1 - fraction) / fraction + 0.5) if fraction > 0 else 0
            line = (
                f"\r[{{}}] {completed}/{self.total}, {rate:.1f} task/s, elapsed: {seconds}s, "
                f"ETA: {eta:5}s"
            )
            columns = shutil.get_terminal_size().columns
            # The whole line fits the terminal: the bar gives way first (never under 2 marks).
            width = max(2, min(self.bar_width, columns - len(line) + 2, int(columns * 0.6)))
            marks = int(width * fraction)
            self.file.write(line.format(">" * marks + " " * (width - marks)))
        else:
            self.file.write(f"completed: {completed}, elapsed: {seconds}s, {rate:.1f} tasks/s")
        self.file.flush()
        self._drawn = completed

    def finish(self, completed: int) -> None:
        if completed != self._drawn:
            self.update(completed)

    def close(self, completed: int) -> None:
        """Draw the last state and end the line, as MMEngine's track functions do."""
        self.finish(completed)
        if not self._ended:
            self.file.write("\n")
            self.file.flush()
            self._ended = True
